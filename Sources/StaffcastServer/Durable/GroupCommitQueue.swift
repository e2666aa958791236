import Foundation
import StaffcastPostgres
import Synchronization

/// Requests that arrive together are committed together. The first request starts a batch on
/// a database worker at once; while a batch commits, later requests gather, and the worker
/// takes them all (up to `maxBatch`) as its next batch. So a batch costs one transaction and
/// one WAL flush however many requests it holds, and under load batches grow by themselves
/// with no timer. At most `maxConcurrent` batches run at a time.
///
/// Everything that arrives together commits together: a service loop hands over what one of
/// its turns read in one call (`submit(contentsOf:)`), or holds the queue while it reads
/// (`hold`/`release`: items queue, no batch starts until the last hold is released), so the
/// requests of a pipelined connection, or of many connections read in one turn, are one batch
/// rather than a batch of the first and another of the rest. A batch already running is not
/// held back: it takes what waits when it finishes, as before.
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
    private let state = Mutex<State>(State())

    private struct State {
        var pending: [Item] = []
        var running = 0
        /// Open holds (`hold`): while any is open, no new batch starts.
        var holds = 0

        /// Whether a new runner should start now (and counts it as running).
        mutating func takeRunner(maxConcurrent: Int) -> Bool {
            guard holds == 0, running < maxConcurrent, !pending.isEmpty else { return false }
            running += 1
            return true
        }
    }

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
        submit(contentsOf: [item]) == 1
    }

    /// Queues `items` in order, as many as there is room for: returns how many (a prefix; the
    /// rest were not queued). One lock, and at most one batch started, for all of them.
    func submit(contentsOf items: [Item]) -> Int {
        guard !items.isEmpty else { return 0 }
        let (accepted, startRunner) = state.withLock { s -> (Int, Bool) in
            let room = max(0, min(items.count, capacity - s.pending.count))
            s.pending.append(contentsOf: items.prefix(room))
            return (room, s.takeRunner(maxConcurrent: maxConcurrent))
        }
        if startRunner { startRunning() }
        return accepted
    }

    /// Items submitted from now on wait until `release` (of every hold) instead of starting a
    /// batch at once. Each `hold` needs its `release`; hold only while reading, never across a wait.
    func hold() {
        state.withLock { $0.holds += 1 }
    }

    /// Ends a `hold`; the last one starts a batch if items wait and none runs.
    func release() {
        let startRunner = state.withLock { s -> Bool in
            s.holds = max(0, s.holds - 1)
            return s.takeRunner(maxConcurrent: maxConcurrent)
        }
        if startRunner { startRunning() }
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
