import Foundation
import Logging
import StaffcastCore
import StaffcastPostgres

/// Runs the engine's database jobs (`EngineAction.run`) on the database workers: each as its
/// user, under row-level security, with its reply encoded on the worker, then handed back to
/// the service loop that asked (`ServiceLoop.jobFinished`). No service loop ever waits on it.
/// Only shared references and no state of its own: every loop's copy is the same runner.
struct JobRunner: Sendable {
    let workers: DatabaseWorkers
    let sends: SendBatcher
    let reads: ReadBatcher
    let answers: AnswerBatcher
    let replyLimits: ReplyLimits
    /// A connection's other jobs (edit, reply, retract, history, …) run in the order sent.
    let order: ConnectionOrder
    let logger: Logger
    let metrics: ServerMetrics

    /// Queues `job`; false when the worker queue is full (nothing was done). Sends and marks
    /// go to their group commits (`SendBatcher`, `ReadBatcher`), which keep their order; any
    /// other job runs after the connection's earlier ones (`ConnectionOrder`).
    func submit(_ job: DatabaseJob, replyTo loop: ServiceLoop) -> Bool {
        if job.isGroupCommittedSend {
            return submitSends([GatheredSend(job: job, receivedAt: loop.frameReceivedAt)], replyTo: loop).isEmpty
        }
        if let refusal = replyRefusal(job) {
            metrics.error(code: refusal.code.rawValue)
            loop.post { $0.jobFinished(job, .failed(refusal)) }
            return true
        }
        if case .client(.markRead(let messageID)) = job.request {
            let ref = job.ref
            return reads.submit(user: job.identity.userID, message: messageID) { result in
                Self.finish(job, result, on: loop) {
                    ServerFrame.read(ref: ref, messageID: messageID, eventID: $0.eventID, unreadCount: $0.unreadCount,
                                     countedThroughSeq: $0.countedThroughSeq).encoded()
                }
            }
        }
        if case .client(.answer(let messageID, let option)) = job.request {
            let ref = job.ref
            let limits = replyLimits
            let queued = answers.submit(user: job.identity.userID, message: messageID, option: option) { result in
                if case .failure(let e) = result { limits.giveBack(for: job.identity.userID, after: e) }
                Self.finish(job, result, on: loop) { _ in ServerFrame.answered(ref: ref, messageID: messageID, option: option).encoded() }
            }
            if !queued { replyLimits.giveBack(for: job.identity.userID) }
            return queued
        }
        if case .client(.markAllRead(let eventID, let throughSeq)) = job.request {
            let ref = job.ref
            return reads.submitAll(user: job.identity.userID, event: eventID, throughSeq: throughSeq) { result in
                Self.finish(job, result, on: loop) {
                    ServerFrame.readAll(ref: ref, eventID: eventID, throughSeq: $0.throughSeq, marked: $0.marked,
                                        unreadCount: $0.unreadCount, countedThroughSeq: $0.countedThroughSeq).encoded()
                }
            }
        }
        if case .subscribe(let event, _, _) = job.request {
            return submitSubscribes(event: event, [job], replyTo: loop)
        }
        let logger = self.logger
        let metrics = self.metrics
        let limits = replyLimits
        let counted: Bool
        if case .client(.reply) = job.request { counted = true } else { counted = false }
        let queued = order.submit(connection: job.connection) { session in
            let started = ServiceLoop.monotonicNow()
            let outcome: JobOutcome<OutFrame>
            do {
                outcome = try Self.execute(job, store: try session.store(), logger: logger, metrics: metrics)
            } catch {
                session.dropIfBroken()
                let e = StaffcastError.from(error, logger: logger)
                metrics.error(code: e.code.rawValue)
                logger.info("request refused", metadata: ["conn": LogValue.number(job.connection), "op": "\(job.request.op)", "code": "\(e.code)"])
                outcome = .failed(e)
            }
            if counted, case .failed(let e) = outcome { limits.giveBack(for: job.identity.userID, after: e) }
            metrics.databaseJob.recordSeconds(ServiceLoop.monotonicNow() - started)
            loop.post { $0.jobFinished(job, outcome) }
        }
        if !queued && counted { replyLimits.giveBack(for: job.identity.userID) }
        return queued
    }

    /// The rate limit's refusal of a reply or poll answer over it (`ReplyLimits`); nil otherwise.
    private func replyRefusal(_ job: DatabaseJob) -> StaffcastError? {
        switch job.request {
        case .client(.reply), .client(.answer): return replyLimits.refusal(for: job.identity.userID)
        default: return nil
        }
    }

    /// Queues sends (not scheduled ones) in order, as one hand-over to the group commit, so
    /// that sends read together commit together. Returns those it had no room for (nothing of
    /// them was queued).
    func submitSends(_ gathered: [GatheredSend], replyTo loop: ServiceLoop) -> [DatabaseJob] {
        // A sample of sends is traced through every stage (`MessageTracer`).
        let tracer = metrics.tracer
        let submitted = MessageTracer.now()
        let items = gathered.map { send -> SendBatcher.Item in
            let job = send.job
            guard case .client(.send(let request)) = job.request else { preconditionFailure("only sends are group committed here") }
            let ref = job.ref
            let traced = tracer.sample(at: submitted) ? (received: send.receivedAt, submitted: submitted) : nil
            return sends.item(sender: job.identity.userID, request, via: "websocket", traced: traced) { result in
                Self.finish(job, result, on: loop, tracer: traced == nil ? nil : tracer) { message in
                    ServerFrame.sent(ref: ref, message: message).encoded()
                }
            }
        }
        let queued = sends.submit(contentsOf: items)
        return gathered[queued...].map(\.job)
    }

    /// Posts a group-committed job's outcome to its loop: the reply `frame` encodes from the
    /// committed value, or the error. Called on the database worker that committed the batch.
    /// With a `tracer` (a traced send), the answer's hand-over to the loop is recorded (`answer`).
    private static func finish<Value>(_ job: DatabaseJob, _ result: Result<Value, StaffcastError>, on loop: ServiceLoop,
                                      tracer: MessageTracer? = nil, frame: (Value) -> [UInt8]) {
        let outcome: JobOutcome<OutFrame>
        switch result {
        case .success(let value): outcome = .reply(OutFrame(text: frame(value)))
        case .failure(let e): outcome = .failed(e)
        }
        guard let tracer else {
            loop.postAnswer { $0.jobAnswered(job, outcome) }
            return
        }
        let posted = MessageTracer.now()
        loop.postAnswer { loop in
            tracer.record(.answer, MessageTracer.now() - posted)
            loop.jobAnswered(job, outcome)
        }
    }

    /// Queues subscribes of one event as one batch (`Store.subscribeBatch`): a few statements
    /// for the whole batch, and each message encoded at most twice for all its frames.
    /// `finished` runs on the loop after the answers (the loop's count of batches in flight).
    /// False when the worker queue is full.
    func submitSubscribes(event: UUID, _ jobs: [DatabaseJob], replyTo loop: ServiceLoop,
                          finished: ServiceLoop.Work? = nil) -> Bool {
        let logger = self.logger
        let metrics = self.metrics
        return workers.submit { session in
            let started = ServiceLoop.monotonicNow()
            var outcomes: [JobOutcome<OutFrame>] = []
            do {
                let requests = jobs.map { job -> Store.SubscribeRequest in
                    guard case .subscribe(_, let since, _) = job.request else { return .init(user: job.identity.userID, sinceSeq: nil) }
                    return .init(user: job.identity.userID, sinceSeq: since)
                }
                let batch = try session.store().subscribeBatch(event: event, requests)
                var builder = SubscribedFrameBuilder(messages: batch.messages)
                // Each missed edit or retract encoded once for every entry that gets it.
                var changeFrames: [Int: OutFrame] = [:]
                func changeFrame(_ c: Int) -> OutFrame {
                    if let done = changeFrames[c] { return done }
                    let frame: ServerFrame = switch batch.changes[c] {
                    case .updated(let message): .messageUpdated(ref: nil, message: message)
                    case .retracted(let id, _): .messageRetracted(ref: nil, messageID: id, eventID: event)
                    }
                    let out = OutFrame(text: frame.encoded())
                    changeFrames[c] = out
                    return out
                }
                for (job, entry) in zip(jobs, batch.entries) {
                    guard case .subscribe(_, _, let generation) = job.request else { continue }
                    switch entry.access {
                    case .granted(let summary):
                        let bytes = builder.frame(ref: job.ref, event: summary, history: entry.history,
                                                  readIndices: entry.read, unreadCount: entry.unreadCount, more: entry.more)
                        outcomes.append(.subscribed(eventID: event, generation: generation, reply: OutFrame(text: bytes),
                                                    historyThrough: batch.historyThrough, accessThrough: batch.accessThrough,
                                                    changesThrough: batch.changesThrough,
                                                    level: summary.accessLevel, followUps: entry.changes.map(changeFrame)))
                    case .noAccess, .noEvent:
                        // The same answer: an event one cannot see is one that does not exist.
                        outcomes.append(.failed(.noSuchEvent(event)))
                    }
                }
            } catch {
                session.dropIfBroken()
                let e = StaffcastError.from(error, logger: logger)
                metrics.error(code: e.code.rawValue)
                outcomes = jobs.map { _ in .failed(e) }
            }
            metrics.databaseJob.recordSeconds(ServiceLoop.monotonicNow() - started)
            // One item per answer: the loop runs a storm's answers a few at a time (`drainInbox`);
            // then the batch counts as back, and what gathered behind it goes.
            let answers: [ServiceLoop.Work] = zip(jobs, outcomes).map { job, outcome in { $0.jobFinished(job, outcome) } }
            loop.post(contentsOf: answers + (finished.map { [$0] } ?? []))
        }
    }

    private static func execute(_ job: DatabaseJob, store: Store, logger: Logger, metrics: ServerMetrics) throws -> JobOutcome<OutFrame> {
        let user = job.identity.userID
        let ref = job.ref
        switch job.request {
        case .client(.send(let request)) where request.schedule != nil:
            // A send for later: stored now, sent by a scheduler pass at its time.
            let scheduled = try store.schedule(as: user, request)
            return .reply(OutFrame(text: ServerFrame.scheduled(ref: ref, scheduled: scheduled).encoded()))
        case .subscribe, .client(.send), .client(.markRead), .client(.markAllRead),
             .client(.subscribe), .client(.unsubscribe), .client(.ping):
            // Routed by `submit` to the subscribe batches and the group commits (the engine
            // answers unsubscribe and ping itself; a subscribe's job is `.subscribe`).
            throw StaffcastError(.internal, "The server routed this request to the wrong place.")
        case .client(.answer):
            // Answers go to their group commit (`submit`); never run one by one.
            throw StaffcastError(.internal, "An answer reached the one-by-one path.")
        case .client(.markNotificationRead(let notificationID)):
            try store.markNotificationRead(as: user, notification: notificationID)
            return .reply(OutFrame(text: ServerFrame.notificationRead(ref: ref, notificationID: notificationID).encoded()))
        case .client(.history(let event, let beforeSeq, let afterSeq, let limit)):
            if let afterSeq {
                // A catch-up page: one more than asked tells whether another page follows.
                let page = try store.messages(as: user, event: event, sinceSeq: afterSeq, limit: limit + 1)
                return .reply(OutFrame(text: ServerFrame.history(ref: ref, eventID: event, messages: Array(page.prefix(limit)),
                                                                 more: page.count > limit).encoded()))
            }
            // One more than asked (the oldest) tells whether older messages remain.
            let page = try store.history(as: user, event: event, beforeSeq: beforeSeq, limit: limit + 1)
            return .reply(OutFrame(text: ServerFrame.history(ref: ref, eventID: event, messages: Array(page.suffix(limit)),
                                                             more: page.count > limit).encoded()))
        case .client(.listEvents):
            return .reply(OutFrame(text: ServerFrame.events(ref: ref, events: try store.events(of: user)).encoded()))
        case .client(.edit(let messageID, let text)):
            let edited = try store.editMessage(as: user, messageID: messageID, text: text)
            return .reply(OutFrame(text: ServerFrame.messageUpdated(ref: ref, message: edited).encoded()))
        case .client(.reply(let request)):
            let stored = try store.reply(as: user, request)
            return .reply(OutFrame(text: ServerFrame.replied(ref: ref, reply: stored).encoded()))
        case .client(.retract(let messageID)):
            let event = try store.retractMessage(as: user, messageID: messageID)
            return .reply(OutFrame(text: ServerFrame.messageRetracted(ref: ref, messageID: messageID, eventID: event).encoded()))
        }
    }
}

/// A send the loop read, with when its frame arrived (for `MessageTracer`).
struct GatheredSend {
    var job: DatabaseJob
    var receivedAt: Double
}

extension DatabaseJob {
    /// A `send`, now or scheduled: what the send rate limit counts.
    var isSend: Bool {
        if case .client(.send) = request { return true }
        return false
    }

    /// A send for now (not scheduled): it goes to the group commit (`SendBatcher`).
    var isGroupCommittedSend: Bool {
        if case .client(.send(let request)) = request { return request.schedule == nil }
        return false
    }
}

