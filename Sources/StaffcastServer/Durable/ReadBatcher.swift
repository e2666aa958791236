import Foundation
import Logging
import StaffcastCore
import StaffcastPostgres

/// Group commit of `mark_read`. When everyone reads an emergency at once, the marks that
/// arrive together are committed together (`Store.markReadBatch`): one transaction, one UPDATE
/// per message for all its new readers, one query for everyone's unread counts. Each mark
/// keeps its own answer; none is acknowledged before its batch commits. A `mark_all_read`
/// joins the same batches (one item, however many messages it marks). Bounded like the send
/// queue: past `capacity` waiting items, `submit` refuses.
final class ReadBatcher: Sendable {
    typealias Completion = @Sendable (Result<Store.MarkedRead, StaffcastError>) -> Void
    typealias AllCompletion = @Sendable (Result<Store.ReadAllResult, StaffcastError>) -> Void

    enum Item: FailableItem {
        case one(Store.PendingRead, Completion)
        case all(Store.PendingReadAll, AllCompletion)

        func fail(_ e: StaffcastError) {
            switch self {
            case .one(_, let done): done(.failure(e))
            case .all(_, let done): done(.failure(e))
            }
        }
    }

    private let queue: GroupCommitQueue<Item>

    init(workers: DatabaseWorkers, capacity: Int, logger: Logger, metrics: ServerMetrics) {
        queue = GroupCommitQueue(workers: workers, capacity: capacity, maxBatch: 2_000,
                                 unavailable: "The server is overloaded right now; nothing was marked. Try again in a moment.",
                                 commit: { batch, session in Self.commit(batch, session, logger: logger, metrics: metrics) })
    }

    /// Queues a mark; `done` is called once, after its batch committed. False when too many
    /// marks are waiting: nothing was queued.
    func submit(user: UUID, message: UUID, done: @escaping Completion) -> Bool {
        queue.submit(.one(Store.PendingRead(user: user, message: message), done))
    }

    /// Queues a mark-all (`mark_all_read`); `done` is called once, after its batch committed.
    /// False when too many items are waiting: nothing was queued.
    func submitAll(user: UUID, event: UUID, throughSeq: Int64?, done: @escaping AllCompletion) -> Bool {
        queue.submit(.all(Store.PendingReadAll(user: user, event: event, throughSeq: throughSeq), done))
    }

    /// What a mark or a mark-all came to.
    enum Outcome {
        case one(Store.MarkedRead)
        case all(Store.ReadAllResult)
    }

    private static func commit(_ batch: [Item], _ session: DatabaseWorkers.Session, logger: Logger, metrics: ServerMetrics) {
        metrics.readBatchSize.record(batch.count)
        // A failed batch fails every mark (the client marks again); an unknown message or
        // event is that item's own answer.
        BatchCommit<Item, Outcome>(name: "read", logger: logger, metrics: metrics).settle(
            batch, session,
            together: { store, items in
                var reads: [Store.PendingRead] = [], alls: [Store.PendingReadAll] = []
                for item in items {
                    switch item {
                    case .one(let read, _): reads.append(read)
                    case .all(let request, _): alls.append(request)
                    }
                }
                let results = try store.markReadBatch(reads, all: alls)
                var nextRead = 0, nextAll = 0
                return items.map { item -> Result<Outcome, StaffcastError>? in
                    switch item {
                    case .one(let read, _):
                        defer { nextRead += 1 }
                        let stored = nextRead < results.reads.count ? results.reads[nextRead] : nil
                        return stored.map { .success(.one($0)) }
                            ?? .failure(.noSuchMessage(read.message))
                    case .all(let request, _):
                        defer { nextAll += 1 }
                        let stored = nextAll < results.all.count ? results.all[nextAll] : nil
                        return stored.map { .success(.all($0)) } ?? .failure(.noSuchEvent(request.event))
                    }
                }
            },
            done: { item, result in item.complete(result) })
    }
}

extension ReadBatcher.Item {
    func complete(_ result: Result<ReadBatcher.Outcome, StaffcastError>) {
        switch (self, result) {
        case (_, .failure(let e)): fail(e)
        case (.one(_, let done), .success(.one(let marked))): done(.success(marked))
        case (.all(_, let done), .success(.all(let r))): done(.success(r))
        default: fail(StaffcastError(.internal, "The server mixed up two answers."))
        }
    }
}
