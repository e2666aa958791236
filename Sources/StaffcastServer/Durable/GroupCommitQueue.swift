import Foundation
import StaffcastPostgres
import Synchronization

/// Requests that arrive together are committed together. The first request starts a batch on
/// a database worker at once; while a batch commits, later requests gather, and the worker
/// takes them all (up to `maxBatch`) as its next batch. So a batch costs one transaction and
/// one WAL flush however many requests it holds, and under load batches grow by themselves
/// with no timer. At most `maxConcurrent` batches run at a time.
///
/// Bounded: past `capacity` waiting items, `submit` refuses (the caller answers `unavailable`).
/// If the worker queue refuses to run a batch, the items waiting are handed to `strand`.
final class GroupCommitQueue<Item: Sendable>: Sendable {
    typealias Commit = @Sendable ([Item], DatabaseWorkers.Session) -> Void

    let capacity: Int
    let maxBatch: Int
    let maxConcurrent: Int
    private let workers: DatabaseWorkers
    private let commit: Commit
    private let strand: @Sendable ([Item]) -> Void
    private let state = Mutex<(pending: [Item], running: Int)>(([], 0))

    init(workers: DatabaseWorkers, capacity: Int, maxBatch: Int, maxConcurrent: Int,
         commit: @escaping Commit, strand: @escaping @Sendable ([Item]) -> Void) {
        self.workers = workers
        self.capacity = capacity
        self.maxBatch = maxBatch
        self.maxConcurrent = maxConcurrent
        self.commit = commit
        self.strand = strand
    }

    /// Queues an item; false (and nothing queued) when `capacity` items already wait.
    func submit(_ item: Item) -> Bool {
        let (accepted, startRunner) = state.withLock { s -> (Bool, Bool) in
            guard s.pending.count < capacity else { return (false, false) }
            s.pending.append(item)
            guard s.running < maxConcurrent else { return (true, false) }
            s.running += 1
            return (true, true)
        }
        if startRunner { startRunning() }
        return accepted
    }

    var waiting: Int { state.withLock { $0.pending.count } }

    private func startRunning() {
        let accepted = workers.submit { [self] session in run(session) }
        guard !accepted else { return }
        let stranded = state.withLock { s -> [Item] in
            s.running -= 1
            guard s.running == 0 else { return [] }
            defer { s.pending.removeAll() }
            return s.pending
        }
        if !stranded.isEmpty { strand(stranded) }
    }

    /// Commits batches on this worker until nothing waits.
    private func run(_ session: DatabaseWorkers.Session) {
        while true {
            let batch = state.withLock { s -> [Item] in
                let n = min(s.pending.count, maxBatch)
                guard n > 0 else {
                    s.running -= 1
                    return []
                }
                defer { s.pending.removeFirst(n) }
                return Array(s.pending.prefix(n))
            }
            if batch.isEmpty { return }
            commit(batch, session)
        }
    }
}
