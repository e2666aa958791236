import StaffcastCore
import StaffcastPostgres

extension GroupCommitQueue where Item: FailableItem {
    /// A queue whose stranded items (the worker queue refused their batch) are answered
    /// `unavailable` with `message`: nothing of theirs was stored.
    convenience init(workers: DatabaseWorkers, capacity: Int, maxBatch: Int, unavailable message: String,
                     commit: @escaping Commit) {
        self.init(workers: workers, capacity: capacity, maxBatch: maxBatch, maxConcurrent: 1, commit: commit,
                  strand: { items in
                      let e = StaffcastError.unavailable(message)
                      for item in items { item.fail(e) }
                  })
    }
}
