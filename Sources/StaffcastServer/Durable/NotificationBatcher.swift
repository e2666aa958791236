import Foundation
import Logging
import StaffcastCore
import StaffcastPostgres

/// Group commit of notifications (`POST /v1/users/{id}/notifications`): those that arrive
/// together are committed together (`Store.createNotificationBatch`), one transaction and one
/// round trip, each still inserted as its own sender under row-level security. One the sender
/// may not send is answered with its own precise error (`Store.createNotification`, alone) and
/// stores nothing. Nothing is acknowledged before its batch commits. Bounded: past
/// `capacity` waiting notifications, `submit` refuses (the caller answers `unavailable`).
final class NotificationBatcher: Sendable {
    typealias Item = BatchItem<Store.PendingNotification, StaffNotification>

    private let queue: GroupCommitQueue<Item>

    init(workers: DatabaseWorkers, capacity: Int, logger: Logger, metrics: ServerMetrics) {
        queue = GroupCommitQueue(workers: workers, capacity: capacity, maxBatch: 256,
                                 unavailable: "The server is overloaded right now; nothing was stored. Try again in a moment.",
                                 commit: { batch, session in Self.commit(batch, session, logger: logger, metrics: metrics) })
    }

    /// Queues a notification; `done` is called once, on a database worker, after its batch
    /// committed (or failed). False when too many are waiting: nothing was queued.
    func submit(sender: UUID, _ request: NotificationRequest, done: @escaping Item.Completion) -> Bool {
        queue.submit(Item(request: Store.PendingNotification(sender: sender, request: request), done: done))
    }

    private static func commit(_ batch: [Item], _ session: DatabaseWorkers.Session, logger: Logger, metrics: ServerMetrics) {
        BatchCommit<Item, StaffNotification>(name: "notification", logger: logger, metrics: metrics).settle(
            batch, session,
            together: { store, items in try store.createNotificationBatch(items.map(\.request)).map { $0.map { .success($0) } } },
            alone: { store, item in try store.createNotification(as: item.request.sender, item.request.request) },
            done: { item, result in item.done(result) })
    }
}
