import Foundation
import Logging
import StaffcastCore
import StaffcastPostgres
import Synchronization

/// Turns what the change listener read (`ChangeBatch`) into one `CommittedBatch` with every
/// live frame encoded once, applies token changes to the gatekeeper, and hands the same batch
/// to every service loop. Runs on the listener's thread.
///
/// Back-pressure: when a loop has more than `maxInboxDepth` live items waiting (its inbox's
/// live lane, `LoopInbox`), the listener waits
/// (the change log, not memory, is the truth) instead of piling batches up.
final class ChangeFeed: Sendable {
    static let maxInboxDepth = 1_024
    private let loops: [ServiceLoop]
    private let gatekeeper: Gatekeeper
    private let metrics: ServerMetrics
    private let isRunning: @Sendable () -> Bool

    init(loops: [ServiceLoop], gatekeeper: Gatekeeper, metrics: ServerMetrics, isRunning: @escaping @Sendable () -> Bool) {
        self.loops = loops
        self.gatekeeper = gatekeeper
        self.metrics = metrics
        self.isRunning = isRunning
    }

    func deliver(_ batch: ChangeBatch) {
        let now = Date()
        let revoked = batch.tokens.isEmpty ? [] : gatekeeper.apply(batch.tokens, now: now)
        let committed = CommittedBatch<OutFrame>(
            revokedTokens: revoked,
            access: batch.access.map { change in
                .init(seq: change.seq, eventID: change.eventID, userID: change.userID, level: change.level,
                      revokedFrame: change.level == nil ? OutFrame(text: ServerFrame.accessRevoked(eventID: change.eventID).encoded()) : nil)
            },
            messages: batch.messages.map { m in
                metrics.listenerLag.recordSeconds(max(0, now.timeIntervalSince(m.sentAt)))
                return .init(seq: m.seq, eventID: m.eventID, expiresAt: m.expiresAt, frame: OutFrame(text: ServerFrame.message(m).encoded()),
                             audience: batch.audiences[m.id])
            },
            notifications: batch.notifications.map { .init(userID: $0.userID, frame: OutFrame(text: ServerFrame.notification($0).encoded())) },
            eventFrames: batch.messageChanges.map { change in
                let frame: ServerFrame = change.message.map { .messageUpdated(ref: nil, message: $0) }
                    ?? .messageRetracted(ref: nil, messageID: change.messageID, eventID: change.eventID)
                // A targeted message's edit or retract goes to its audience only.
                return .init(eventID: change.eventID, frame: OutFrame(text: frame.encoded()), audience: batch.audiences[change.messageID])
            } + batch.replies.map { r in
                .init(eventID: r.reply.eventID, frame: OutFrame(text: ServerFrame.reply(r.reply).encoded()), audience: r.organisers)
            },
            // Poll tallies go where receipts go: the event's subscribed admins and owners.
            receipts: batch.receipts.map { .init(eventID: $0.eventID, frame: OutFrame(text: ServerFrame.receipt($0).encoded())) }
                + batch.tallies.map { .init(eventID: $0.eventID, frame: OutFrame(text: ServerFrame.pollTally($0).encoded())) },
            reminders: batch.reminders.map { r in
                .init(eventID: r.message.eventID, users: r.unread,
                      frame: OutFrame(text: ServerFrame.reminder(message: r.message, round: r.round).encoded()))
            })
        metrics.listenerBatches.increment()
        // A traced message (`MessageTracer`): its wake-up, read and encode stages, and the
        // loops' own from here.
        let tracer = metrics.tracer
        var trace: ChangeFeedTrace?
        if !batch.messages.isEmpty, let t = tracer.take(anyOf: batch.messages.map(\.seq)),
           let message = committed.messages.first(where: { $0.seq == t.seq }) {
            let encoded = MessageTracer.now()
            tracer.record(.wakeup, batch.readStartedAt - t.committed.committed)
            tracer.record(.read, batch.readAt - batch.readStartedAt)
            tracer.record(.encode, encoded - batch.readAt)
            trace = ChangeFeedTrace(seq: t.seq, frame: ObjectIdentifier(message.frame))
        }
        // Only live work counts: a storm's database answers wait behind live fan-out, not before it.
        while isRunning(), loops.contains(where: { $0.liveDepth > Self.maxInboxDepth }) { usleep(1_000) }
        guard !batch.messages.isEmpty else {
            for loop in loops { loop.postLive { $0.deliver(committed) } }
            return
        }
        let posted = MessageTracer.now()
        let traced = trace
        // Commit to fan-out, once per message: observed when the last loop has queued it.
        let sentAt = batch.messages.map(\.sentAt)
        let remaining = Countdown(loops.count)
        let latency = metrics.fanoutLatency
        for loop in loops {
            loop.postLive {
                $0.deliver(committed, trace: traced, posted: posted)
                guard remaining.tick() else { return }
                let now = Date()
                for t in sentAt { latency.recordSeconds(now.timeIntervalSince(t)) }
            }
        }
    }
}

/// The traced message of a batch: which seq, and its frame (the same object on every loop).
struct ChangeFeedTrace: Sendable {
    var seq: Int64
    var frame: ObjectIdentifier
}

/// Counts down from n across threads; `tick` is true for the call that reaches zero.
private final class Countdown: Sendable {
    private let left: Mutex<Int>
    init(_ n: Int) { left = Mutex(n) }
    func tick() -> Bool { left.withLock { n in n -= 1; return n == 0 } }
}
