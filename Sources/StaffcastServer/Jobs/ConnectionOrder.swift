import StaffcastPostgres
import Synchronization

/// Runs the database jobs of one connection one after another, in the order they were
/// submitted; jobs of different connections still run side by side on the workers. Without it
/// two `edit`s (or `reply`s) a client sends back to back ran on two workers at once, and the
/// one sent first could commit last and stick (attack round: five edits left the second).
///
/// A connection's first job goes to the worker queue; jobs submitted while it runs wait here,
/// and when it ends the next one goes to the back of the worker queue: one job of a connection
/// at a time, and a connection that keeps many in flight takes its turn with everyone else's
/// work instead of holding a worker (a review found four such clients could stall every send).
/// If the queue refuses the next one (full or stopping), it runs at once on the same worker
/// rather than being lost. Bounded by the engine: a connection has at most
/// `max_in_flight_per_connection` requests waiting on the database before the server stops
/// reading it. Any thread, but one connection's jobs are submitted from one thread at a time
/// (its service loop).
final class ConnectionOrder: Sendable {
    private let workers: DatabaseWorkers
    /// Connection → the jobs waiting behind the one running (present while one runs).
    private let waiting = Mutex<[Int: [DatabaseWorkers.Job]]>([:])

    init(workers: DatabaseWorkers) {
        self.workers = workers
    }

    /// Queues `job` behind the connection's earlier ones; false when the worker queue is full
    /// (nothing was queued).
    func submit(connection: Int, _ job: @escaping DatabaseWorkers.Job) -> Bool {
        let runsNow = waiting.withLock { w -> Bool in
            if w[connection] != nil {
                w[connection, default: []].append(job)
                return false
            }
            w[connection] = []
            return true
        }
        guard runsNow else { return true }
        let accepted = workers.submit(chain(connection, job))
        if !accepted { waiting.withLock { _ = $0.removeValue(forKey: connection) } }
        return accepted
    }

    /// `job`, then the connection's next job queued behind everyone else's (or run here when
    /// the queue refuses it), until none waits.
    private func chain(_ connection: Int, _ job: @escaping DatabaseWorkers.Job) -> DatabaseWorkers.Job {
        { [self] session in
            var current: DatabaseWorkers.Job? = job
            while let run = current {
                run(session)
                session.dropIfBroken()
                current = nil
                let next = waiting.withLock { w -> DatabaseWorkers.Job? in
                    guard let first = w[connection]?.first else {
                        w[connection] = nil
                        return nil
                    }
                    w[connection, default: []].removeFirst()
                    return first
                }
                guard let next else { return }
                if !workers.submit(chain(connection, next)) { current = next }
            }
        }
    }
}
