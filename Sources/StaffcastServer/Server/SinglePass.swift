import Logging
import StaffcastPostgres
import Synchronization

/// A periodic pass on a database worker, never more than one at a time: the ticker calls
/// `start` (any thread, never waits), which hands `body` to a worker unless the last pass is
/// still running. A failed pass is logged, named by `name`; the next tick tries again. While
/// passes keep failing (the database is down: one a second), the log says so once a minute,
/// not every second, and says when a pass succeeds again.
final class SinglePass: Sendable {
    private let workers: DatabaseWorkers
    private let logger: Logger
    private let name: String
    private let busy = Mutex(false)
    /// Failed passes in a row, and when one was last logged (monotonic seconds).
    private let failing = Mutex<(count: Int, loggedAt: Double)>((0, 0))
    static let repeatLogEvery = 60.0

    /// `name`: what passes, for the log ("outbox", "scheduled sends").
    init(workers: DatabaseWorkers, logger: Logger, name: String) {
        self.workers = workers
        self.logger = logger
        self.name = name
    }

    /// Starts a pass running `body` with the worker's store, unless one is running or the
    /// worker queue is full.
    func start(_ body: @escaping @Sendable (Store) throws -> Void) {
        let start = busy.withLock { busy -> Bool in
            if busy { return false }
            busy = true
            return true
        }
        guard start else { return }
        let queued = workers.submit { [self] session in
            defer { busy.withLock { $0 = false } }
            do {
                try body(try session.store())
                let failed = failing.withLock { f -> Int in defer { f = (0, 0) }; return f.count }
                if failed > 0 { logger.notice("\(name): passes work again", metadata: ["failed_passes": "\(failed)"]) }
            } catch {
                session.dropIfBroken()
                let now = ServiceLoop.monotonicNow()
                let (count, log) = failing.withLock { f -> (Int, Bool) in
                    f.count += 1
                    let log = f.count == 1 || now - f.loggedAt >= Self.repeatLogEvery
                    if log { f.loggedAt = now }
                    return (f.count, log)
                }
                if log {
                    logger.warning("\(name): a pass failed; the next tick tries again (said again once a minute while they fail)",
                                   metadata: ["error": "\(error)", "failed_passes": "\(count)"])
                }
            }
        }
        if !queued { busy.withLock { $0 = false } }
    }
}
