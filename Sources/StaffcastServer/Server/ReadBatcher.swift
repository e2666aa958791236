import Foundation
import Logging
import StaffcastCore
import StaffcastPostgres

/// Group commit of `mark_read`. When everyone reads an emergency at once, the marks that
/// arrive together are committed together (`Store.markReadBatch`): one transaction, one UPDATE
/// per message for all its new readers, one query for everyone's unread counts. Each mark
/// keeps its own answer; none is acknowledged before its batch commits. Bounded like the send
/// queue: past `capacity` waiting marks, `submit` refuses.
final class ReadBatcher: Sendable {
    typealias Completion = @Sendable (Result<(eventID: UUID, unreadCount: Int), StaffcastError>) -> Void

    struct Item: Sendable {
        var read: Store.PendingRead
        var done: Completion
    }

    private let queue: GroupCommitQueue<Item>

    init(workers: DatabaseWorkers, capacity: Int, logger: Logger, metrics: ServerMetrics) {
        queue = GroupCommitQueue(workers: workers, capacity: capacity, maxBatch: 2_000, maxConcurrent: 1,
                                 commit: { batch, session in
                                     Self.commit(batch, session, logger: logger, metrics: metrics)
                                 },
                                 strand: { items in
                                     let e = StaffcastError.unavailable("The server is overloaded right now; nothing was marked. Try again in a moment.")
                                     for item in items { item.done(.failure(e)) }
                                 })
    }

    /// Queues a mark; `done` is called once, after its batch committed. False when too many
    /// marks are waiting: nothing was queued.
    func submit(user: UUID, message: UUID, done: @escaping Completion) -> Bool {
        queue.submit(Item(read: Store.PendingRead(user: user, message: message), done: done))
    }

    private static func commit(_ batch: [Item], _ session: DatabaseWorkers.Session, logger: Logger, metrics: ServerMetrics) {
        let started = ServiceLoop.monotonicNow()
        defer {
            metrics.databaseJob.recordSeconds(ServiceLoop.monotonicNow() - started)
            metrics.readBatchSize.record(batch.count)
        }
        do {
            let results = try session.store().markReadBatch(batch.map(\.read))
            for (item, result) in zip(batch, results) {
                if let result {
                    item.done(.success(result))
                } else {
                    item.done(.failure(.noSuchMessage(item.read.message)))
                }
            }
        } catch {
            session.dropIfBroken()
            let e = StaffcastError.from(error, logger: logger)
            metrics.error(code: e.code.rawValue)
            for item in batch { item.done(.failure(e)) }
        }
    }
}
