import Foundation
import Logging
import StaffcastCore
import StaffcastPostgres

/// Group commit of poll answers (`answer` op and `POST /v1/messages/{id}/answers`), the same
/// way as reads (`ReadBatcher`): when ten thousand staff answer "Are you safe?" at once, the
/// answers that arrive together are one transaction (`Store.answerBatch`). Each keeps its own
/// outcome; none is acknowledged before its batch commits. Bounded: past `capacity` waiting
/// answers, `submit` refuses (the caller answers `unavailable`; nothing was stored).
final class AnswerBatcher: Sendable {
    typealias Item = BatchItem<Store.PendingAnswer, UUID>

    private let queue: GroupCommitQueue<Item>

    init(workers: DatabaseWorkers, capacity: Int, logger: Logger, metrics: ServerMetrics) {
        queue = GroupCommitQueue(workers: workers, capacity: capacity, maxBatch: 2_000,
                                 unavailable: "The server is overloaded right now; your answer was not stored. Try again in a moment.",
                                 commit: { batch, session in Self.commit(batch, session, logger: logger, metrics: metrics) })
    }

    /// Queues an answer; `done` gets the message's event once its batch committed, or the
    /// error. False when too many answers are waiting: nothing was queued.
    func submit(user: UUID, message: UUID, option: Int, done: @escaping Item.Completion) -> Bool {
        queue.submit(Item(request: Store.PendingAnswer(user: user, message: message, option: option), done: done))
    }

    private static func commit(_ batch: [Item], _ session: DatabaseWorkers.Session, logger: Logger, metrics: ServerMetrics) {
        // Each answer's own outcome comes back from the batch; a failed batch fails every answer.
        BatchCommit<Item, UUID>(name: "answer", logger: logger, metrics: metrics).settle(
            batch, session,
            together: { store, items in try store.answerBatch(items.map(\.request)).map { $0 } },
            done: { item, result in item.done(result) })
    }
}
