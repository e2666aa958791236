import Foundation
import Logging
import StaffcastCore
import StaffcastPostgres

/// A group commit of one kind of request, each with its own outcome (`AnswerBatcher`,
/// `NotificationBatcher`; their kinds are in `RequestBatcher+Kinds.swift`): the queue, the
/// submit and the settling written once. Requests that arrive together are committed together
/// (`Kind.together`); none is acknowledged before its batch commits. Bounded: past `capacity`
/// waiting requests, `submit` refuses (the caller answers `unavailable`; nothing was stored).
/// Submitted from any thread; `done` is called once, on the database worker of its batch.
final class RequestBatcher<Request: Sendable, Value>: Sendable {
    typealias Item = BatchItem<Request, Value>

    /// What one kind of request brings: its name for the log, its largest batch, what a
    /// stranded one is told, how a batch commits and (optional) how one the batch could not
    /// decide, or each of a failed batch, is answered alone.
    struct Kind: Sendable {
        var name: String
        var maxBatch: Int
        var unavailable: String
        var together: @Sendable (Store, [Request]) throws -> [Result<Value, StaffcastError>?]
        var alone: (@Sendable (Store, Request) throws -> Value)? = nil
    }

    private let queue: GroupCommitQueue<Item>

    init(_ kind: Kind, workers: DatabaseWorkers, capacity: Int, logger: Logger, metrics: ServerMetrics) {
        let settling = BatchCommit<Item, Value>(name: kind.name, logger: logger, metrics: metrics)
        queue = GroupCommitQueue(workers: workers, capacity: capacity, maxBatch: kind.maxBatch, unavailable: kind.unavailable,
                                 commit: { batch, session in
                                     let alone: ((Store, Item) throws -> Value)? = kind.alone.map { alone in
                                         { store, item in try alone(store, item.request) }
                                     }
                                     settling.settle(batch, session,
                                                     together: { store, items in try kind.together(store, items.map(\.request)) },
                                                     alone: alone,
                                                     done: { item, result in item.done(result) })
                                 })
    }

    /// Queues a request; false when too many are waiting: nothing was queued.
    func submit(_ request: Request, done: @escaping Item.Completion) -> Bool {
        queue.submit(Item(request: request, done: done))
    }
}
