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
    typealias Completion = @Sendable (Result<(eventID: UUID, unreadCount: Int), StaffcastError>) -> Void
    typealias AllCompletion = @Sendable (Result<Store.ReadAllResult, StaffcastError>) -> Void

    enum Item: Sendable {
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
        queue = GroupCommitQueue(workers: workers, capacity: capacity, maxBatch: 2_000, maxConcurrent: 1,
                                 commit: { batch, session in
                                     Self.commit(batch, session, logger: logger, metrics: metrics)
                                 },
                                 strand: { items in
                                     let e = StaffcastError.unavailable("The server is overloaded right now; nothing was marked. Try again in a moment.")
                                     for item in items { item.fail(e) }
                                 })
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

    private static func commit(_ batch: [Item], _ session: DatabaseWorkers.Session, logger: Logger, metrics: ServerMetrics) {
        let started = ServiceLoop.monotonicNow()
        defer {
            metrics.databaseJob.recordSeconds(ServiceLoop.monotonicNow() - started)
            metrics.readBatchSize.record(batch.count)
        }
        do {
            var ones: [(Store.PendingRead, Completion)] = [], alls: [(Store.PendingReadAll, AllCompletion)] = []
            for item in batch {
                switch item {
                case .one(let read, let done): ones.append((read, done))
                case .all(let request, let done): alls.append((request, done))
                }
            }
            let results = try session.store().markReadBatch(ones.map(\.0), all: alls.map(\.0))
            for ((read, done), result) in zip(ones, results.reads) {
                done(result.map { .success($0) } ?? .failure(.noSuchMessage(read.message)))
            }
            for ((request, done), result) in zip(alls, results.all) {
                done(result.map { .success($0) } ?? .failure(.noSuchEvent(request.event)))
            }
        } catch {
            session.dropIfBroken()
            let e = StaffcastError.from(error, logger: logger)
            metrics.error(code: e.code.rawValue)
            for item in batch { item.fail(e) }
        }
    }
}
