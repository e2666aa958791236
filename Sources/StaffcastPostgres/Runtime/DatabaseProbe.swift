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
    /// When the last round trip completed (monotonic seconds), the last failure, whether
    /// to stop.
    private let shared = Mutex<(lastSuccess: Double?, lastError: String?, stop: Bool)>((nil, nil, false))
    private let done = DispatchSemaphore(value: 0)

    public init(conninfo: String, interval: Double = 1, deadline: Double = 2, logger: Logger) {
        self.conninfo = conninfo
        self.interval = interval
        self.deadline = deadline
        self.logger = logger
    }

    /// Monotonic seconds of the last completed round trip; nil before the first.
    public var lastSuccess: Double? { shared.withLock { $0.lastSuccess } }
    /// Why the last round trip failed (libpq's words: for logs and operators, never for
    /// unauthenticated answers); nil after a success.
    public var lastError: String? { shared.withLock { $0.lastError } }

    public func start() {
        let thread = Thread { [self] in run() }
        thread.name = "staffcast-probe"
        thread.start()
    }

    /// Ends the thread; waits at most `timeout` seconds (a connect under way may take longer,
    /// and then ends by itself).
    public func stop(timeout: TimeInterval = 3) {
        shared.withLock { $0.stop = true }
        _ = done.wait(timeout: .now() + timeout)
    }

    private var stopping: Bool { shared.withLock { $0.stop } }

    private func run() {
        var connection: PGConnection?
        var wasUp: Bool?
        while !stopping {
            let started = Monotonic.now()
            do {
                let conn = try connection ?? PGConnection(conninfo: conninfo)
                connection = conn
                try conn.ping(timeout: deadline)
                shared.withLock {
                    $0.lastSuccess = Monotonic.now()
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
            if rest > 0 { sleepUnlessStopping(rest) }
        }
        connection = nil
        done.signal()
    }

    private func sleepUnlessStopping(_ seconds: Double) {
        let end = Monotonic.now() + seconds
        while !stopping, Monotonic.now() < end { usleep(50_000) }
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
