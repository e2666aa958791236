import Foundation
import StaffcastCore
import Glibc
import Logging
import Synchronization

/// Follows what every staffcast server commits, through PostgreSQL LISTEN/NOTIFY.
///
/// Runs on its own thread with its own connection. A notification is only a wake-up: on each
/// one (and every `pollInterval` regardless, in case one was lost) it reads the change logs
/// after its cursors from one snapshot and hands the batch to `deliver`, in seq order. So
/// coalesced or missed notifications lose nothing, and after a lost connection it reconnects
/// with backoff and reads on from where it was.
public final class ChangeListener: @unchecked Sendable {
    public enum State: String, Sendable {
        case starting, listening, reconnecting, stopped
    }

    public let conninfo: String
    public let pollInterval: TimeInterval
    private let logger: Logger
    private let deliver: @Sendable (ChangeBatch) -> Void
    private let shared: Mutex<(state: State, lastError: String?, lastRead: Double?)> = Mutex((.starting, nil, nil))
    private let thread = StoppableThread(name: "staffcast-listener")
    private var cursors: ChangeCursors
    private let shortcut: Shortcut?

    /// What the server's own fan-out tells its listener (`ChangeFeed`): a wake-up made only of
    /// its own send batches (`message@<origin>:<batch>`, sql/014) needs no read when each of
    /// them was handed to the loops already; and no read needs to look at messages that were.
    public struct Shortcut: Sendable {
        /// This server's origin, as its send batches name it.
        public var origin: String
        /// True when every batch named was handed on (`OwnSendBatches`; may wait briefly).
        public var handedOn: @Sendable ([UInt64]) -> Bool
        /// Every message up to this seq has been handed to the loops.
        public var handedOnThrough: @Sendable () -> Int64
        /// A wake-up was served without a read.
        public var skipped: @Sendable () -> Void
        public init(origin: String, handedOn: @escaping @Sendable ([UInt64]) -> Bool,
                    handedOnThrough: @escaping @Sendable () -> Int64, skipped: @escaping @Sendable () -> Void) {
            self.origin = origin
            self.handedOn = handedOn
            self.handedOnThrough = handedOnThrough
            self.skipped = skipped
        }
    }

    /// `deliver` is called on the listener's thread, one batch at a time, in order.
    public init(conninfo: String, from cursors: ChangeCursors, pollInterval: TimeInterval = 5, logger: Logger,
                shortcut: Shortcut? = nil, deliver: @escaping @Sendable (ChangeBatch) -> Void) {
        self.conninfo = conninfo
        self.cursors = cursors
        self.pollInterval = pollInterval
        self.logger = logger
        self.shortcut = shortcut
        self.deliver = deliver
    }

    public var state: State { shared.withLock { $0.state } }
    public var lastError: String? { shared.withLock { $0.lastError } }
    /// When a read of the change logs last completed (`Monotonic` seconds): a listener that is
    /// `listening` but has not read for longer than `pollInterval` is stuck (a silent database).
    public var lastRead: Double? { shared.withLock { $0.lastRead } }

    public func start() { thread.start { [self] in run() } }

    /// Asks the thread to end and waits for it (at most `timeout` seconds).
    public func stop(timeout: TimeInterval = 3) { thread.stop(timeout: timeout) }

    private var stopping: Bool { thread.stopping }

    private func setState(_ s: State, error: String? = nil) {
        shared.withLock {
            $0.state = s
            if let error { $0.lastError = error } else if s == .listening { $0.lastError = nil }
        }
    }

    private func run() {
        var backoff: TimeInterval = 0.25
        while !stopping {
            do {
                let conn = try PGConnection(conninfo: conninfo)
                try conn.execute("LISTEN staffcast")
                setState(.listening)
                logger.info("change listener is listening")
                backoff = 0.25
                try follow(conn)
            } catch {
                if stopping { break }
                setState(.reconnecting, error: "\(error)")
                logger.warning("change listener lost the database; reconnecting", metadata: [
                    "error": "\(error)", "retry_in_s": "\(backoff)"])
                thread.sleep(backoff)
                backoff = min(backoff * 2, 5)
            }
        }
        setState(.stopped)
    }

    /// Reads and delivers until the connection fails or `stop` is called. A read woken by
    /// notifications reads the logs their payloads name (and always access and token changes:
    /// `ChangeLogs.toRead`); the first read and the one on the poll timer read them all.
    private func follow(_ conn: PGConnection) throws {
        let store = Store(conn)
        try catchUp(store, .all) // whatever was committed while we were not listening
        var lastRead = Date() // of every log
        while !stopping {
            // A notification that arrived while catchUp's queries ran was read off the socket
            // by libpq already and waits in its queue: poll would not report it, and its
            // commit may be newer than the snapshot just read. Look there first.
            var payloads = try conn.drainNotifications()
            if payloads.isEmpty {
                var pfd = pollfd(fd: conn.socket, events: Int16(POLLIN), revents: 0)
                let ready = poll(&pfd, 1, 250)
                if ready < 0 && errno != EINTR {
                    throw PostgresError(.connectionLost, "poll failed: \(String(cString: strerror(errno)))")
                }
                if ready > 0 {
                    payloads = try conn.drainNotifications()
                    if !conn.isHealthy { throw PostgresError(.connectionLost, "the listener's connection closed") }
                }
            }
            // Every log at least every `pollInterval` (a notification could be missed), even
            // while notifications keep the listener busy with the logs they name.
            if Date().timeIntervalSince(lastRead) >= pollInterval {
                try catchUp(store, .all)
                lastRead = Date()
            } else if !payloads.isEmpty {
                // Only this server's own send batches, each handed on already: nothing to read.
                // (Anything else committed makes its own notification, which is then in this
                // wake-up or woke an earlier read.)
                if let shortcut, let batches = ChangeLogs.ownSendBatches(payloads, origin: shortcut.origin),
                   shortcut.handedOn(batches) {
                    shortcut.skipped()
                    continue
                }
                try catchUp(store, ChangeLogs.toRead(after: payloads))
            }
        }
    }

    /// Reads `logs` until no log has more; a read after a full page reads every log.
    private func catchUp(_ store: Store, _ logs: ChangeLogs) throws {
        var logs = logs
        while true {
            if let shortcut {
                // Handed on already (LocalFanoutGate: every message up to it has been): not read again.
                cursors.message = max(cursors.message, shortcut.handedOnThrough())
            }
            let started = Date().timeIntervalSince1970
            var batch = try store.changes(after: cursors, logs: logs)
            batch.readStartedAt = started
            batch.readAt = Date().timeIntervalSince1970
            cursors = batch.cursors
            shared.withLock { $0.lastRead = Monotonic.now() }
            if !batch.isEmpty { deliver(batch) }
            if !batch.hasMore || stopping { return }
            logs = .all
        }
    }
}
