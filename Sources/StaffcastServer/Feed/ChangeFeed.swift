import Foundation
import Logging
import StaffcastCore
import StaffcastPostgres
import Synchronization

/// Hands committed changes to every service loop, from two places:
/// - `deliver`: what the change listener read (`ChangeBatch`), on the listener's thread. It
///   applies token changes to the gatekeeper, encodes every live frame once and posts the same
///   `CommittedBatch` to every loop.
/// - `handOn`: a batch of sends this server has just committed, on the database worker that
///   committed it, without waiting for the NOTIFY and the read of the logs (issue 21 item 2).
///
/// Both post under one lock, in the order `LocalFanoutGate` allows: a batch of sends goes first
/// only when everything committed before it (messages, access and token changes) has been
/// posted, and the feed then skips its messages; otherwise the feed brings it in order. So
/// every subscriber still gets each message once, in seq order, and after every access change
/// committed before it. Other servers learn of it from the change feed, as before.
///
/// Back-pressure: when a loop has more than `maxInboxDepth` live items waiting (its inbox's
/// live lane, `LoopInbox`), the listener waits (the change log, not memory, is the truth)
/// instead of piling batches up, and `handOn` leaves its batch to the feed.
final class ChangeFeed: Sendable {
    static let maxInboxDepth = 1_024
    private let loops: LoopDirectory
    private let gatekeeper: Gatekeeper
    private let metrics: ServerMetrics
    private let localFanout: Bool
    private let isRunning: @Sendable () -> Bool
    /// What has been posted to the loops; held while posting, so both paths post in one order.
    private let gate: Mutex<LocalFanoutGate>
    /// This server's id in its send batches' wake-ups (`message@<origin>:<batch>`, sql/014);
    /// nil when `local_fanout` is off.
    let origin: String?
    /// This server's own send batches and whether each was handed on (`OwnSendBatches`).
    private let own = Mutex(OwnSendBatches())

    /// `start`: the cursors the change listener starts from.
    init(loops: LoopDirectory, start: ChangeCursors, gatekeeper: Gatekeeper, metrics: ServerMetrics, localFanout: Bool,
         isRunning: @escaping @Sendable () -> Bool) {
        self.loops = loops
        self.gatekeeper = gatekeeper
        self.metrics = metrics
        self.localFanout = localFanout
        self.isRunning = isRunning
        gate = Mutex(LocalFanoutGate(start: Self.position(start)))
        origin = localFanout ? UUID().wireText : nil
    }

    /// What the change listener may skip (`ChangeListener.Shortcut`): a wake-up made only of
    /// this server's own send batches, each handed on.
    func listenerShortcut() -> ChangeListener.Shortcut? {
        guard let origin else { return nil }
        let skippedReads = metrics.listenerReadsSkipped
        return ChangeListener.Shortcut(
            origin: origin,
            handedOn: { [self] batches in handedOn(batches) },
            handedOnThrough: { [self] in gate.withLock { $0.posted.message } },
            skipped: { skippedReads.increment() })
    }

    /// A send batch of this server starts committing (`SendBatcher`): its number, which its
    /// wake-up names (`commitSends(origin:)`). `handOn(_:batch:)` or `ownBatchFailed` follows.
    func beginOwnBatch() -> UInt64 { own.withLock { $0.begin() } }

    /// The batch did not commit (or was not handed on for another reason): the listener reads.
    func ownBatchFailed(_ batch: UInt64) { own.withLock { $0.decide(batch, handedOn: false) } }

    /// On the listener's thread: true when every batch named was handed on. A wake-up usually
    /// beats the committing worker's hand-on by microseconds (the NOTIFY and the COMMIT's answer
    /// leave PostgreSQL together), so a batch still deciding is waited for, at most
    /// `decisionWait`; past it the listener reads.
    private func handedOn(_ batches: [UInt64]) -> Bool {
        let deadline = ServiceLoop.monotonicNow() + Self.decisionWait
        while true {
            switch own.withLock({ $0.verdict(batches) }) {
            case .skip: return true
            case .read: return false
            case .wait:
                if ServiceLoop.monotonicNow() > deadline { return false }
                usleep(50)
            }
        }
    }

    static let decisionWait = 0.002

    private static func position(_ c: ChangeCursors) -> LocalFanoutGate.Position {
        .init(message: c.message, access: c.access, token: c.token)
    }

    // MARK: the change listener's batches

    func deliver(_ batch: ChangeBatch) {
        let now = Date()
        let revoked = batch.tokens.isEmpty ? [] : gatekeeper.apply(batch.tokens, now: now)
        // Messages a batch of sends handed on already are skipped (checked again under the lock).
        let handedOn = gate.withLock { $0.posted.message }
        let fresh = batch.messages.filter { $0.seq > handedOn }
        for m in fresh { metrics.listenerLag.recordSeconds(max(0, now.timeIntervalSince(m.sentAt))) }
        var committed = CommittedBatch<OutFrame>(
            revokedTokens: revoked,
            access: batch.access.map { change in
                .init(seq: change.seq, eventID: change.eventID, userID: change.userID, level: change.level,
                      revokedFrame: change.level == nil ? OutFrame(text: ServerFrame.accessRevoked(eventID: change.eventID).encoded()) : nil)
            },
            messages: fresh.map { Self.live($0, audience: batch.audiences[$0.id]) },
            notifications: batch.notifications.map { .init(userID: $0.userID, frame: OutFrame(text: ServerFrame.notification($0).encoded())) },
            eventFrames: batch.messageChanges.map { change in
                let frame: ServerFrame = change.message.map { .messageUpdated(ref: nil, message: $0) }
                    ?? .messageRetracted(ref: nil, messageID: change.messageID, eventID: change.eventID)
                // A targeted message's edit or retract goes to its audience only.
                return .init(eventID: change.eventID, frame: OutFrame(text: frame.encoded()), audience: batch.audiences[change.messageID],
                             changeSeq: change.seq)
            } + batch.replies.map { r in
                .init(eventID: r.reply.eventID, frame: OutFrame(text: ServerFrame.reply(r.reply).encoded()), audience: r.organisers)
            },
            // Poll tallies go where receipts go: the event's subscribed admins and owners.
            receipts: batch.receipts.map { .init(eventID: $0.eventID, frame: OutFrame(text: ServerFrame.receipt($0).encoded())) }
                + batch.tallies.map { .init(eventID: $0.eventID, frame: OutFrame(text: ServerFrame.pollTally($0).encoded())) },
            reminders: batch.reminders.map { r in
                .init(eventID: r.message.eventID, users: r.unread,
                      frame: OutFrame(text: ServerFrame.reminder(message: r.message, round: r.round).encoded()))
            },
            markedRead: Self.markedRead(batch.receipts))
        metrics.listenerBatches.increment()
        // A traced message (`MessageTracer`): its wake-up, read and encode stages, and the
        // loops' own from here.
        var trace: ChangeFeedTrace?
        if !fresh.isEmpty, let t = metrics.tracer.take(anyOf: fresh.map(\.seq)),
           let message = committed.messages.first(where: { $0.seq == t.seq }) {
            let encoded = MessageTracer.now()
            metrics.tracer.record(.wakeup, batch.readStartedAt - t.committed.committed)
            metrics.tracer.record(.read, batch.readAt - batch.readStartedAt)
            metrics.tracer.record(.encode, encoded - batch.readAt)
            trace = ChangeFeedTrace(seq: t.seq, frame: ObjectIdentifier(message.frame))
        }
        // Only live work counts: a storm's database answers wait behind live fan-out, not before it.
        while isRunning(), loops.all.contains(where: { $0.liveDepth > Self.maxInboxDepth }) { usleep(1_000) }
        gate.withLock { gate in
            let skip = gate.feed(through: Self.position(batch.cursors))
            if skip > handedOn { committed.messages.removeAll { $0.seq <= skip } } // handed on meanwhile
            guard !committed.isEmpty else { return } // only messages, all handed on already
            post(committed, sentAt: fresh.filter { $0.seq > skip }.map(\.sentAt), trace: trace.flatMap { $0.seq > skip ? $0 : nil })
        }
    }

    // MARK: this server's own send batches

    /// A batch of sends just committed here (`Store.commitSends`), on the worker that committed
    /// it, right after `COMMIT` (its senders' answers follow): handed to the loops now when
    /// `LocalFanoutGate` allows, else left to the change feed; either way recorded for the
    /// listener (`OwnSendBatches`).
    /// `batch`: its number from `beginOwnBatch` (nil with `local_fanout` off).
    func handOn(_ sends: Store.CommittedSends, batch: UInt64?) {
        let outcome = handOnOutcome(sends)
        if let batch { own.withLock { $0.decide(batch, handedOn: outcome == .handedOn || outcome == .feedFirst) } }
        metrics.localFanout[outcome]?.increment()
    }

    private func handOnOutcome(_ sends: Store.CommittedSends) -> LocalFanoutOutcome {
        guard localFanout else { return .off }
        guard let commit = sends.commit else { return .feedFirst } // nothing stored: nothing to hand on
        let messages = sends.messages.compactMap { $0 }.sorted { $0.seq < $1.seq }
        // A targeted message's audience (message_audience) is read by the feed with the message.
        guard messages.allSatisfy(\.teams.isEmpty) else { return .targeted }
        guard !loops.all.contains(where: { $0.liveDepth > Self.maxInboxDepth }) else { return .busy }
        // Encoded only for a batch that can go first (the feed encodes the others itself).
        switch gate.withLock({ $0.decision(for: commit) }) {
        case .handOn: break
        case .feedBehind: return .feedBehind
        case .alreadyHandedOn: return .feedFirst
        }
        let committed = CommittedBatch<OutFrame>(messages: messages.map { Self.live($0, audience: nil) })
        let tracer = metrics.tracer
        let decision: LocalFanoutGate.Decision = gate.withLock { gate in
            let decision = gate.admit(commit)
            guard decision == .handOn else { return decision } // a traced message stays the feed's
            var trace: ChangeFeedTrace?
            if let t = tracer.take(anyOf: messages.map(\.seq)), let message = committed.messages.first(where: { $0.seq == t.seq }) {
                // No wake-up and no read: from COMMIT to encoded.
                tracer.record(.encode, MessageTracer.now() - t.committed.committed)
                trace = ChangeFeedTrace(seq: t.seq, frame: ObjectIdentifier(message.frame))
            }
            post(committed, sentAt: messages.map(\.sentAt), trace: trace)
            return decision
        }
        switch decision {
        case .handOn: return .handedOn
        case .feedBehind: return .feedBehind
        case .alreadyHandedOn: return .feedFirst
        }
    }

    // MARK: posting

    /// A live message, its frame encoded once for every loop.
    /// One `marked_read` per reader and event of the batch, listing what they read in it (a
    /// `mark_all_read` is one frame, not one per message), in log order.
    static func markedRead(_ reads: [ReadReceipt]) -> [CommittedBatch<OutFrame>.MarkedRead] {
        struct Reader: Hashable { var user: UUID; var event: UUID }
        var order: [Reader] = []
        var read: [Reader: [UUID]] = [:]
        for receipt in reads {
            let reader = Reader(user: receipt.userID, event: receipt.eventID)
            if read[reader] == nil { order.append(reader) }
            read[reader, default: []].append(receipt.messageID)
        }
        return order.map { reader in
            .init(userID: reader.user, eventID: reader.event,
                  frame: OutFrame(text: ServerFrame.markedRead(eventID: reader.event, messageIDs: read[reader] ?? []).encoded()))
        }
    }

    private static func live(_ m: StaffMessage, audience: Set<UUID>?) -> CommittedBatch<OutFrame>.Message {
        .init(seq: m.seq, eventID: m.eventID, expiresAt: m.expiresAt, frame: OutFrame(text: ServerFrame.message(m).encoded()),
              audience: audience)
    }

    /// The same batch to every loop's live lane. Called with the gate's lock held, so that
    /// batches from both paths reach every loop in one order.
    private func post(_ committed: CommittedBatch<OutFrame>, sentAt: [Date], trace: ChangeFeedTrace?) {
        let all = loops.all
        guard !committed.messages.isEmpty else {
            for loop in all { loop.postLive { $0.deliver(committed) } }
            return
        }
        let posted = MessageTracer.now()
        // Commit to fan-out, once per message: observed when the last loop has queued it.
        let remaining = Countdown(all.count)
        let latency = metrics.fanoutLatency
        for loop in all {
            loop.postLive {
                $0.deliver(committed, trace: trace, posted: posted)
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
