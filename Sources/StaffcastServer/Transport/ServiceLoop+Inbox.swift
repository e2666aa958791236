import CLibWebSockets
import Foundation
import StaffcastCore

/// How a service loop runs what other threads hand it (`LoopInbox`): live fan-out first and
/// whole, everything else within a budget per wake-up. `post`, `postLive` and the depths may
/// be called from any thread; everything else runs on the loop's thread only.
///
/// Why: in a reconnect storm a loop receives thousands of subscribe answers (each a history
/// frame to queue), upgrades and HTTP answers at once. Run in arrival order and all in one
/// go, a live message posted behind them waited for all of it, and its writes waited for the
/// next turn of `lws_service` after that. Now a wake-up runs every live item, then backlog
/// work for at most `stormBudget` and `stormItems`, and if work is left it wakes itself
/// again: the turn ends in between, which writes what the live items queued
/// (`turnEnded`), and the next turn reads, accepts and handshakes (each bounded per turn as
/// well) before more storm work runs. The item bound also bounds the writes a turn's end
/// makes for storm answers (every socket that asked, in the order they asked).
extension ServiceLoop {
    /// Seconds of backlog work per wake-up, and items.
    static let stormBudget = 0.002
    static let stormItems = 64

    // MARK: any thread

    /// Runs `work` on the loop's thread soon, after live fan-out and within the loop's
    /// per-wake-up budget (`drainInbox`). Returns the number of items now waiting.
    @discardableResult
    func post(_ work: @escaping Work) -> Int {
        inbox.withLock { box -> Int in
            box.work.append(work)
            if box.needsWake() { Self.wake(box.context) }
            return box.count
        }
    }

    /// Several items at once (one lock, one wake-up): a subscribe batch's answers, which the
    /// loop can then run a few at a time.
    func post(contentsOf items: [Work]) {
        inbox.withLock { box in
            box.work.append(contentsOf: items)
            if box.needsWake() { Self.wake(box.context) }
        }
    }

    /// The answer to a client's own request (a group commit's on a WebSocket, any HTTP one):
    /// run at the loop's next wake-up, at the end of its turn, or between the writes of a long
    /// fan-out (`runAnswers`), whichever comes first. A WebSocket's is written before the
    /// fan-out (`jobAnswered`, `writeFirst`); an HTTP answer is written as it runs.
    func postAnswer(_ work: @escaping Work) {
        inbox.withLock { box in
            box.answers.append(work)
            if box.needsWake() { Self.wake(box.context) }
        }
    }

    /// Live fan-out (the change feed): run first at the loop's next wake-up, whatever else waits.
    func postLive(_ work: @escaping Work) {
        inbox.withLock { box in
            box.live.append(work)
            if box.needsWake() { Self.wake(box.context) }
        }
    }

    /// Wakes the loop, under the inbox lock: the loop clears `context` under the same lock
    /// before it destroys the context, so a wake can never reach a destroyed one. Only the
    /// first post after the loop last took its inbox wakes it (`LoopInbox.needsWake`): a group
    /// commit answering 256 sends wakes a loop once.
    /// (`lws_cancel_service` only writes to the context's wake-up descriptor: cheap to hold
    /// the lock for.)
    private static func wake(_ context: UInt) {
        if context != 0 { LWSContext.wake(context) }
    }

    /// Items waiting in the inbox (every lane); the loop's own backlog is not counted.
    var inboxDepth: Int { inbox.withLock { $0.count } }
    /// Live items waiting: what the change feed holds back on.
    var liveDepth: Int { inbox.withLock { $0.live.count } }

    // MARK: the loop's thread

    /// The loop woke for its inbox (`LWS_CALLBACK_EVENT_WAIT_CANCELLED`).
    func drainInbox() {
        answersThisTurn = 0
        answersWakeAsked = false
        let (live, work) = inbox.withLock { box -> ([Work], [Work]) in
            defer {
                box.live.removeAll(keepingCapacity: true)
                box.work.removeAll(keepingCapacity: true)
                box.wakeAsked = false
            }
            return (box.live, box.work)
        }
        for item in live { item(self) }
        runAnswers()
        backlog.append(contentsOf: work)
        runBacklog()
    }

    /// Runs backlog items in order until the budget is spent; wakes the loop again if any are left.
    private func runBacklog() {
        let started = Self.monotonicNow()
        var ran = 0
        while backlogHead < backlog.count {
            let item = backlog[backlogHead]
            backlog[backlogHead] = Self.ranWork // releases what the item held as soon as it ran
            backlogHead += 1
            item(self)
            ran += 1
            // A clock read every few items: most items take microseconds.
            if ran >= Self.stormItems { break }
            if ran % 4 == 0, Self.monotonicNow() - started >= Self.stormBudget { break }
        }
        if backlogHead == backlog.count {
            backlog.removeAll(keepingCapacity: true)
            backlogHead = 0
            return
        }
        if backlogHead >= 1_024 {
            backlog.removeFirst(backlogHead)
            backlogHead = 0
        }
        if let context = lws?.context { lws_cancel_service(context) }
    }

    /// Work left in the backlog (for status).
    var backlogDepth: Int { backlog.count - backlogHead }

    /// Sends the gathered subscribes to the database in batches per event (at most
    /// `maxSubscribeBatch` each), so a reconnect storm costs a few statements per batch. While
    /// `maxSubscribeBatchesInFlight` of this loop's batches are out, they keep gathering and go
    /// when one comes back (`subscribeBatchFinished`), as sends wait for their group commit: a
    /// storm's batches then grow with the database's pace. Without the bound a storm whose
    /// subscribes came a few per turn (subscribing in the URL, say) sent thousands of batches of
    /// ten, each paying ~1 ms of planning: 1.7–4.6 s of PostgreSQL CPU for 10,000 subscribes,
    /// and the storm took 1.5–3.3 s instead of 0.5.
    func flushSubscribes() {
        guard subscribeBatchesInFlight < Self.maxSubscribeBatchesInFlight else { return }
        let jobs = subscribes
        subscribes = []
        var byEvent: [UUID: [DatabaseJob]] = [:]
        for job in jobs {
            guard case .subscribe(let event, _, _) = job.request else { continue }
            byEvent[event, default: []].append(job)
        }
        for (event, list) in byEvent {
            for start in stride(from: 0, to: list.count, by: Self.maxSubscribeBatch) {
                let chunk = Array(list[start..<min(start + Self.maxSubscribeBatch, list.count)])
                if runner.submitSubscribes(event: event, chunk, replyTo: self, finished: { $0.subscribeBatchFinished() }) {
                    subscribeBatchesInFlight += 1
                } else {
                    let now = Self.monotonicNow()
                    for job in chunk { perform(engine.jobRefused(connection: job.connection, ref: job.ref, now: now, wasSend: job.isSend)) }
                }
            }
        }
    }

    /// A subscribe batch came back (after its answers): what gathered meanwhile goes now.
    func subscribeBatchFinished() {
        subscribeBatchesInFlight = max(0, subscribeBatchesInFlight - 1)
        if !subscribes.isEmpty { flushSubscribes() }
    }

    static let maxSubscribeBatch = 500
    /// Two: one batch in the database while the next is answered or gathers.
    static let maxSubscribeBatchesInFlight = 2

    /// The end of a turn of the loop (every callback of the turn has run; it waits next): the
    /// sends read during the turn go to the group commit, and live fan-out posted during the
    /// turn runs now rather than in the next turn, where its wake-up would be one ready
    /// descriptor among every socket to write. Other work keeps waiting for its wake-up: run
    /// at every turn's end, a storm's subscribe flush would send batches half the size
    /// (twice PostgreSQL's CPU per subscribe, measured). Last, the plain WebSockets that have
    /// something to write are written (`writeAskedSockets`).
    func turnEnded() {
        // Answers first: a `sent` may release a publisher's held sends, which then join this
        // turn's hand-over to the group commit instead of the next turn's.
        runAnswers()
        if !gatheredSends.isEmpty { flushSends() }
        let live = inbox.withLock { box -> [Work] in
            guard !box.live.isEmpty else { return [] }
            defer { box.live.removeAll(keepingCapacity: true) }
            return box.live
        }
        for item in live { item(self) }
        writeAskedSockets()
        answersThisTurn = 0
        answersWakeAsked = false
    }

    /// Runs the answers posted since the loop last looked (`postAnswer`), at most
    /// `answersPerTurn` in one turn of the loop (wake-up, callbacks, turn end, with the fan-out's
    /// writes): a read storm's thousands of `read` answers are spread over turns as storm work
    /// is (the loop wakes itself once for the rest), so live fan-out never waits for all of
    /// them. Cheap when there are none (one uncontended lock), so the writes of a fan-out call
    /// it every few sockets.
    func runAnswers() {
        let room = Self.answersPerTurn - answersThisTurn
        let (answers, more) = inbox.withLock { box -> ([Work], Bool) in
            guard !box.answers.isEmpty else { return ([], false) }
            guard room > 0 else { return ([], true) }
            guard box.answers.count > room else {
                defer { box.answers.removeAll(keepingCapacity: true) }
                return (box.answers, false)
            }
            let taken = Array(box.answers.prefix(room))
            box.answers.removeFirst(room)
            return (taken, true)
        }
        answersThisTurn += answers.count
        for item in answers { item(self) }
        if more, !answersWakeAsked, let context = lws?.context {
            answersWakeAsked = true
            lws_cancel_service(context)
        }
    }

    static let answersPerTurn = 128

    /// Hands the gathered sends to the group commit in one call, in the order they were read;
    /// those it has no room for are answered `unavailable`.
    func flushSends() {
        let jobs = gatheredSends
        gatheredSends = []
        let refused = runner.submitSends(jobs, replyTo: self)
        guard !refused.isEmpty else { return }
        let now = Self.monotonicNow()
        for job in refused { perform(engine.jobRefused(connection: job.connection, ref: job.ref, now: now, wasSend: job.isSend)) }
    }

    /// A group commit's answer from the answers lane (`postAnswer`): its socket is written
    /// before the turn's fan-out (`writeFirst`). Other database answers (a storm's `subscribed`
    /// with history, say) use `jobFinished` and wait behind live fan-out's writes.
    func jobAnswered(_ job: DatabaseJob, _ outcome: JobOutcome<OutFrame>) {
        answering = true
        defer { answering = false }
        jobFinished(job, outcome)
    }

    /// A database job's answer, on the loop's thread.
    func jobFinished(_ job: DatabaseJob, _ outcome: JobOutcome<OutFrame>) {
        perform(engine.jobCompleted(connection: job.connection, ref: job.ref, outcome: outcome,
                                    now: Self.monotonicNow(), wall: Date(), wasSend: job.isSend))
    }

    /// A committed batch from the change feed, on the loop's thread. With a `trace`, the
    /// hand-off and fan-out stages are recorded and the loop watches for the frame's writes.
    func deliver(_ batch: CommittedBatch<OutFrame>, trace: ChangeFeedTrace? = nil, posted: Double = 0) {
        let started = trace == nil ? 0 : MessageTracer.now()
        perform(engine.committed(batch, now: Self.monotonicNow(), wall: Date()))
        if let trace { traceQueued(trace, posted: posted, started: started) }
        for f in engine.fannedOut {
            logger.info("message fanned out", metadata: ["seq": LogValue.number(f.seq), "event_id": LogValue.id(f.eventID),
                                                         "recipients": LogValue.number(f.recipients), "loop": LogValue.number(index)])
        }
    }

    private static let ranWork: Work = { _ in }
}
