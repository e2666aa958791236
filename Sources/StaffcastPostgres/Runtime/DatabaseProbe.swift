import Foundation
import Glibc
import Logging
import Synchronization

/// Finds out, all the time, whether the database answers: once every `interval` it makes one
/// round trip (`SELECT 1`) on a connection of its own, which gives up after `deadline`
/// seconds. Readiness (`/readyz`) reads the time of the last round trip that completed, so
/// answering it never waits on the database, and a database that went silent (a network that
/// drops everything, a frozen host) turns readiness off within `interval + deadline` however
/// long TCP would take to notice.
///
/// Runs on its own thread, which alone owns the connection; the results are behind a lock.
public final class DatabaseProbe: @unchecked Sendable {
    public let conninfo: String
    public let interval: Double
    public let deadline: Double
    private let logger: Logger
    /// When the last round trip completed (monotonic seconds), how long it took, the last failure.
    private let shared = Mutex<(lastSuccess: Double?, lastLatency: Double?, lastError: String?)>((nil, nil, nil))
    private let thread = StoppableThread(name: "staffcast-probe")

    public init(conninfo: String, interval: Double = 1, deadline: Double = 2, logger: Logger) {
        self.conninfo = conninfo
        self.interval = interval
        self.deadline = deadline
        self.logger = logger
    }

    /// Monotonic seconds of the last completed round trip; nil before the first.
    public var lastSuccess: Double? { shared.withLock { $0.lastSuccess } }
    /// Seconds the last completed round trip took; nil before the first.
    public var lastLatency: Double? { shared.withLock { $0.lastLatency } }
    /// Why the last round trip failed (libpq's words: for logs and operators, never for
    /// unauthenticated answers); nil after a success.
    public var lastError: String? { shared.withLock { $0.lastError } }

    public func start() { thread.start { [self] in run() } }

    /// Ends the thread; waits at most `timeout` seconds (a connect under way may take longer,
    /// and then ends by itself).
    public func stop(timeout: TimeInterval = 3) { thread.stop(timeout: timeout) }

    private var stopping: Bool { thread.stopping }

    private func run() {
        var connection: PGConnection?
        var wasUp: Bool?
        while !stopping {
            let started = Monotonic.now()
            do {
                let conn = try connection ?? PGConnection(conninfo: conninfo)
                connection = conn
                let sent = Monotonic.now()
                try conn.ping(timeout: deadline)
                shared.withLock {
                    $0.lastSuccess = Monotonic.now()
                    $0.lastLatency = Monotonic.now() - sent
                    $0.lastError = nil
                }
                if wasUp == false { logger.info("the database answers again") }
                wasUp = true
            } catch {
                connection = nil // a ping past its deadline closed it; make a new one next time
                shared.withLock { $0.lastError = "\(error)" }
                if wasUp != false {
                    logger.warning("the database did not answer the readiness probe", metadata: [
                        "error": "\(error)", "deadline_s": "\(deadline)"])
                }
                wasUp = false
            }
            let rest = interval - (Monotonic.now() - started)
            if rest > 0 { thread.sleep(rest) }
        }
        connection = nil
    }
}

/// Seconds on the monotonic clock (`CLOCK_MONOTONIC`, the clock of `ServiceLoop.monotonicNow`):
/// unaffected by changes of the wall clock.
public enum Monotonic {
    public static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}
