import Logging
import StaffcastPostgres
import Synchronization

/// A periodic pass on a database worker, never more than one at a time: the ticker calls
/// `start` (any thread, never waits), which hands `body` to a worker unless the last pass is
/// still running. A failed pass is logged with `failure`; the next tick tries again.
final class SinglePass: Sendable {
    private let workers: DatabaseWorkers
    private let logger: Logger
    private let failure: String
    private let busy = Mutex(false)

    init(workers: DatabaseWorkers, logger: Logger, failure: String) {
        self.workers = workers
        self.logger = logger
        self.failure = failure
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
            } catch {
                session.dropIfBroken()
                logger.warning("\(failure)", metadata: ["error": "\(error)"])
            }
        }
        if !queued { busy.withLock { $0 = false } }
    }
}
