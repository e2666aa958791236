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
        var done: Completion
    }

    private let queue: GroupCommitQueue<Item>
    /// Fills in an emergency's default `escalate_after_minutes`.
    private let escalation: EscalationPolicy

    init(workers: DatabaseWorkers, capacity: Int, duplicateWindowMinutes: Int = 0, logger: Logger, metrics: ServerMetrics,
         escalation: EscalationPolicy = EscalationPolicy()) {
        self.escalation = escalation
        let context = Context(logger: logger, metrics: metrics, duplicateWindowMinutes: duplicateWindowMinutes)
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
        var stored = escalation.applyingDefault(to: request)
        // A template's type is known only in the transaction: it takes the default there.
        stored.template?.emergencyEscalationDefault = escalation.emergencyDefaultMinutes
        return queue.submit(Item(send: Store.PendingSend(sender: sender, request: stored), via: via, done: done))
    }

    /// What committing needs, apart from the batcher itself (the queue is made in `init`).
    private struct Context: Sendable {
        let logger: Logger
        let metrics: ServerMetrics
        /// The double-send guard's window (0: off); applied inside the batch and to the retries alone.
        let duplicateWindowMinutes: Int

        func commit(_ batch: [Item], _ session: DatabaseWorkers.Session) {
            let started = ServiceLoop.monotonicNow()
            defer {
                metrics.databaseJob.recordSeconds(ServiceLoop.monotonicNow() - started)
                metrics.sendBatchSize.record(batch.count)
            }
            let store: Store
            do {
                store = try session.store()
            } catch {
                let e = StaffcastError.from(error, logger: logger)
                for item in batch { item.done(.failure(e)) }
                return
            }
            do {
                let stored = try store.sendBatch(batch.map(\.send), duplicateWindowMinutes: duplicateWindowMinutes)
                for (item, message) in zip(batch, stored) {
                    if let message {
                        delivered(item, message)
                    } else {
                        alone(item, store) // the sender may not make it: its own precise error
                    }
                }
            } catch let e as PostgresError where e.isConnectionProblem {
                session.dropIfBroken()
                let error = StaffcastError.from(e, logger: logger)
                for item in batch { item.done(.failure(error)) }
            } catch {
                // The transaction rolled back: nothing of the batch was stored. Each send again,
                // alone, so that a bad one fails by itself.
                logger.warning("send batch failed; sending one by one", metadata: ["error": "\(error)", "size": LogValue.number(batch.count)])
                session.dropIfBroken()
                for item in batch { alone(item, store) }
            }
        }

        private func alone(_ item: Item, _ store: Store) {
            do {
                delivered(item, try store.send(as: item.send.sender, item.send.request, duplicateWindowMinutes: duplicateWindowMinutes))
            } catch {
                let e = StaffcastError.from(error, logger: logger)
                metrics.error(code: e.code.rawValue)
                logger.info("send refused", metadata: ["code": "\(e.code)", "via": "\(item.via)"])
                item.done(.failure(e))
            }
        }

        private func delivered(_ item: Item, _ message: StaffMessage) {
            metrics.messageSent(type: message.messageType.rawValue, priority: message.priority.rawValue)
            logger.info("message sent", metadata: ["message_id": LogValue.id(message.id), "seq": LogValue.number(message.seq),
                                                   "event_id": LogValue.id(message.eventID), "type": "\(message.messageType.rawValue)",
                                                   "priority": "\(message.priority.rawValue)", "via": "\(item.via)"])
            item.done(.success(message))
        }
    }
}
