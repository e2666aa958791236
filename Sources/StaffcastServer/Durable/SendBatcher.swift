import Foundation
import Logging
import StaffcastCore
import StaffcastPostgres
import Synchronization

/// Group commit of sends. Sends from every service loop and the HTTP API wait here while
/// earlier ones commit, and are then committed together (`Store.sendBatch`): one transaction
/// and one WAL flush for up to 256 messages, each still inserted as its own sender
/// under row-level security. At low load a send starts at once; under load the batches grow
/// by themselves: one batch commits at a time while the next gathers behind it, which also
/// keeps the messages of one connection in the order they were sent (seq order = send order).
///
/// Each send keeps its own outcome: one the sender may not make is answered with its own
/// precise error (`Store.send` is asked again for it, alone), and stores nothing. Nothing is
/// acknowledged before its batch commits. Bounded: past `capacity` waiting sends, `submit`
/// returns false and the caller answers `unavailable`.
final class SendBatcher: Sendable {
    typealias Completion = @Sendable (Result<StaffMessage, StaffcastError>) -> Void

    struct Item: Sendable {
        var send: Store.PendingSend
        var via: String
        /// A send sampled by `MessageTracer`: when its frame arrived and when it was submitted.
        var traced: (received: Double, submitted: Double)?
        var done: Completion
    }

    private let queue: GroupCommitQueue<Item>
    /// Fills in an emergency's default `escalate_after_minutes`.
    private let escalation: EscalationPolicy

    /// `feed`: where a committed batch is handed to this server's loops at once (`ChangeFeed.handOn`).
    init(workers: DatabaseWorkers, capacity: Int, duplicateWindowMinutes: Int = 0, logger: Logger, metrics: ServerMetrics,
         escalation: EscalationPolicy = EscalationPolicy(), feed: ChangeFeed? = nil) {
        self.escalation = escalation
        let context = Context(logger: logger, metrics: metrics, duplicateWindowMinutes: duplicateWindowMinutes, feed: feed)
        queue = GroupCommitQueue(workers: workers, capacity: capacity, maxBatch: 256, maxConcurrent: 1,
                                 commit: { batch, session in context.commit(batch, session) },
                                 strand: { items in
                                     let e = StaffcastError.unavailable("The server is overloaded right now; nothing was stored. Try again in a moment.")
                                     for item in items { item.done(.failure(e)) }
                                 })
    }

    /// Queues a send; `done` is called once, on a database worker, after its batch committed
    /// (or failed). False when too many sends are waiting: nothing was queued.
    func submit(sender: UUID, _ request: SendRequest, via: String, done: @escaping Completion) -> Bool {
        queue.submit(item(sender: sender, request, via: via, done: done))
    }

    /// A send ready to queue with `submit(contentsOf:)`; `traced`: it is followed through every
    /// stage (`MessageTracer`; its commit is recorded when its batch commits).
    func item(sender: UUID, _ request: SendRequest, via: String, traced: (received: Double, submitted: Double)? = nil,
              done: @escaping Completion) -> Item {
        var stored = escalation.applyingDefault(to: request)
        // A template's type is known only in the transaction: it takes the default there.
        stored.template?.emergencyEscalationDefault = escalation.emergencyDefaultMinutes
        return Item(send: Store.PendingSend(sender: sender, request: stored), via: via, traced: traced, done: done)
    }

    /// Queues the sends one service loop read in one turn, in order, so they join one batch.
    /// Returns how many were queued (a prefix; the others were not, and must be answered
    /// `unavailable` by the caller).
    func submit(contentsOf items: [Item]) -> Int {
        queue.submit(contentsOf: items)
    }

    /// While a loop reads (see `GroupCommitQueue.hold`): what it submits meanwhile waits for
    /// `release` and then starts as one batch.
    func hold() { queue.hold() }
    func release() { queue.release() }

    /// What committing needs, apart from the batcher itself (the queue is made in `init`).
    private struct Context: Sendable {
        let logger: Logger
        let metrics: ServerMetrics
        /// The double-send guard's window (0: off); applied inside the batch and to the retries alone.
        let duplicateWindowMinutes: Int
        let feed: ChangeFeed?

        func commit(_ batch: [Item], _ session: DatabaseWorkers.Session) {
            metrics.sendBatchSize.record(batch.count)
            let window = duplicateWindowMinutes
            let metrics = self.metrics
            let feed = self.feed
            // The batch's number names it in its wake-up, so the listener can tell whether it was
            // handed on (a retry alone below commits without it, and is read as any other).
            let ownBatch = feed?.origin == nil ? nil : feed?.beginOwnBatch()
            var decided = false
            defer { if !decided, let ownBatch { feed?.ownBatchFailed(ownBatch) } }
            BatchCommit<Item, StaffMessage>(name: "send", logger: logger, metrics: metrics).settle(
                batch, session,
                together: { store, items in
                    let sends = try store.commitSends(items.map(\.send), duplicateWindowMinutes: window,
                                                      origin: feed?.origin.flatMap { o in ownBatch.map { "\(o):\($0)" } })
                    let stored = sends.messages
                    // A traced send's first stages end here, then the batch goes to this
                    // server's loops (unless the change feed must bring it), before its
                    // senders' answers are encoded and logged.
                    let committedAt = MessageTracer.now()
                    for (item, message) in zip(items, stored) {
                        guard let t = item.traced, let message else { continue }
                        metrics.tracer.committed(seq: message.seq, received: t.received, submitted: t.submitted,
                                                 sentAt: message.sentAt.timeIntervalSince1970, committed: committedAt)
                    }
                    feed?.handOn(sends, batch: ownBatch)
                    decided = true
                    // Committed: counted once per kind, before any answer goes out (each count
                    // is a lookup in the metrics registry, too much to pay per send).
                    var sentByKind: [SentKind: Int] = [:]
                    for case let message? in stored { sentByKind[SentKind(type: message.messageType, priority: message.priority), default: 0] += 1 }
                    for (kind, count) in sentByKind {
                        metrics.messagesSent(type: kind.type.rawValue, priority: kind.priority.rawValue, count: count)
                    }
                    // nil: the sender may not make it; asked alone for its own precise error.
                    return stored.map { $0.map { .success($0) } }
                },
                alone: { store, item in
                    let message = try store.send(as: item.send.sender, item.send.request, duplicateWindowMinutes: window)
                    metrics.messageSent(type: message.messageType.rawValue, priority: message.priority.rawValue)
                    return message
                },
                done: { item, result in
                    switch result {
                    case .success(let message):
                        delivered(item, message)
                    case .failure(let e):
                        logger.info("send refused", metadata: ["code": "\(e.code)", "via": "\(item.via)"])
                        item.done(.failure(e))
                    }
                })
        }

        private struct SentKind: Hashable {
            var type: MessageType
            var priority: Priority
        }

        private func delivered(_ item: Item, _ message: StaffMessage) {
            logger.info("message sent", metadata: ["message_id": LogValue.id(message.id), "seq": LogValue.number(message.seq),
                                                   "event_id": LogValue.id(message.eventID), "type": "\(message.messageType.rawValue)",
                                                   "priority": "\(message.priority.rawValue)", "via": "\(item.via)"])
            item.done(.success(message))
        }
    }
}
