import Foundation

/// What a connection asks for: client frames in, database jobs out, and their answers back
/// (subscribes lined up with live fan-out). Same thread rules as `FanoutEngine`.
extension FanoutEngine {
    // MARK: receiving

    /// Part of a client frame arrived (`final`: it is complete). Frames over the size limit are
    /// dropped with `too_large`; binary frames with `invalid`.
    public func received(_ id: Int, _ bytes: UnsafeRawBufferPointer, final: Bool, binary: Bool, now: Double) -> [EngineAction] {
        guard let connection = connections[id] else { return [] }
        connection.lastHeard = now
        if connection.rx.count + bytes.count > Limits.maxFrameBytes {
            connection.rxOverflow = true
            connection.rx = []
        } else if !connection.rxOverflow {
            connection.rx.append(contentsOf: bytes)
        }
        guard final else { return [] }
        let frame = connection.rx
        let overflow = connection.rxOverflow
        connection.rx = []
        connection.rxOverflow = false
        var actions: [EngineAction] = []
        if overflow {
            reply(connection, .error(ref: nil, StaffcastError(.tooLarge,
                "The frame was larger than \(Limits.maxFrameBytes) bytes and was dropped; messages may be at most \(Limits.maxMessageBytes) bytes.")),
                now: now, into: &actions)
        } else if binary {
            reply(connection, .error(ref: nil, .invalid("Send JSON in text frames; binary frames are not part of staffcast.v1.")),
                  now: now, into: &actions)
        } else {
            handleFrame(connection, frame, now: now, into: &actions)
        }
        return actions
    }

    /// A pong arrived: the heartbeat's round trip.
    public func pongReceived(_ id: Int, now: Double) {
        guard let connection = connections[id] else { return }
        connection.lastHeard = now
        if let sent = connection.pingSentAt {
            connection.lastRTT = now - sent
            connection.pingSentAt = nil
        }
    }

    private func handleFrame(_ connection: ConnectionState<Frame>, _ bytes: [UInt8], now: Double, into actions: inout [EngineAction]) {
        switch ClientFrameDecoder.decode(bytes) {
        case .failure(let e):
            actions.append(.notice(.frameRefused(connection: connection.id, code: e.error.code)))
            reply(connection, .error(ref: e.ref, e.error), now: now, into: &actions)
        case .success(let frame):
            dispatch(connection, frame, now: now, into: &actions)
        }
    }

    func dispatch(_ connection: ConnectionState<Frame>, _ frame: ClientFrame, now: Double, into actions: inout [EngineAction]) {
        let ref = frame.ref
        // A draining connection (closing after its queue) is still answered: `unavailable`, or a pong.
        guard connection.isOpen || (draining && connection.phase.isAfterFlush) else { return }
        if draining, frame.request != .ping {
            reply(connection, .error(ref: ref, .unavailable("This server is shutting down; reconnect and try again.")), now: now, into: &actions)
            return
        }
        switch frame.request {
        case .ping:
            reply(connection, .pong(ref: ref), now: now, into: &actions)
        case .unsubscribe(let event):
            connection.pendingSubscribes[event] = nil
            hub.unsubscribe(connection.id, from: event)
            connection.levels[event] = nil
            reply(connection, .unsubscribed(ref: ref, eventID: event), now: now, into: &actions)
        case .subscribe(let event, let sinceSeq):
            let generation = nextGeneration
            nextGeneration += 1
            // Only a subscribe that was taken supersedes one in flight (a refused one cancels nothing).
            if run(connection, ref: ref, .subscribe(eventID: event, sinceSeq: sinceSeq, generation: generation), now: now, into: &actions) {
                connection.pendingSubscribes[event] = generation
            }
        case .send:
            guard connection.sendBucket.take(now: now) else {
                reply(connection, .error(ref: ref, Self.sendRateLimited(configuration)), now: now, into: &actions)
                return
            }
            run(connection, ref: ref, .client(frame.request), now: now, into: &actions)
        case .markRead, .markAllRead, .markNotificationRead, .history, .listEvents, .edit, .retract, .reply, .answer:
            run(connection, ref: ref, .client(frame.request), now: now, into: &actions)
        }
    }

    /// The answer to a send over the rate limit (WebSocket per connection, HTTP per token):
    /// the one refusal a sender who keeps sends in flight can get, so it names the limit and
    /// the settings that set it.
    public static func sendRateLimited(_ configuration: EngineConfiguration) -> StaffcastError {
        StaffcastError(.rateLimited, "You reached the send rate limit: a burst of \(Int(configuration.sendBurst)) messages, then \(Self.rateText(configuration.sendRatePerSecond)) a second (server settings send_burst and send_rate_per_second); this message was not stored. Send it again in a moment.")
    }

    static func rateText(_ perSecond: Double) -> String {
        perSecond == perSecond.rounded() ? "\(Int(perSecond))" : String(format: "%.2f", perSecond)
    }

    // MARK: database answers

    /// A job's answer came back (in any order relative to other jobs). `wasSend`: the job was a
    /// `send`, whose refusal may give back what it took of the send rate limit
    /// (`StaffcastError.refundsRateLimit`).
    public func jobCompleted(connection id: Int, ref: String?, outcome: JobOutcome<Frame>, now: Double, wall: Date,
                             wasSend: Bool = false) -> [EngineAction] {
        guard let connection = connections[id] else { return [] }
        connection.inFlight = max(0, connection.inFlight - 1)
        var actions: [EngineAction] = []
        switch outcome {
        case .reply(let frame):
            enqueue(connection, frame, now: now, into: &actions)
        case .failed(let error):
            if wasSend, error.refundsRateLimit { connection.sendBucket.giveBack(now: now) }
            reply(connection, .error(ref: ref, error), now: now, into: &actions)
        case .subscribed(let event, let generation, let frame, let historyThrough, let accessThrough, let changesThrough,
                         let level, let followUps):
            completeSubscribe(connection, event: event, generation: generation, ref: ref, reply: frame, followUps: followUps,
                              level: level, through: (historyThrough, accessThrough, changesThrough), now: now, wall: wall,
                              into: &actions)
        }
        runHeld(connection, now: now, into: &actions)
        // The only request of a connection whose writes are held is the subscribe in its URL
        // (a client may not send before the `101`; one that pipelines frames anyway only gets
        // `hello` early): answered, so `hello` and it go together.
        releaseWrites(connection, into: &actions)
        // A connection closing after its requests are answered may close now.
        if case .closing(_, _, true, _) = connection.phase, connection.inFlight == 0 {
            requestWritable(connection, into: &actions)
        }
        return actions
    }

    /// The runner could not take the job (its queue is full): nothing was done.
    public func jobRefused(connection id: Int, ref: String?, now: Double, wasSend: Bool = false) -> [EngineAction] {
        jobCompleted(connection: id, ref: ref, outcome: .failed(.unavailable(
            "The server is overloaded right now; nothing was done. Try again in a moment.")), now: now, wall: Date(timeIntervalSince1970: 0),
                     wasSend: wasSend)
    }

    /// Joins a connection to an event's channel once its snapshot is ready, lining it up with
    /// live fan-out so nothing is missed or sent twice.
    private func completeSubscribe(_ connection: ConnectionState<Frame>, event: UUID, generation: Int, ref: String?, reply frame: Frame,
                                   followUps: [Frame], level: AccessLevel?,
                                   through: (history: Int64, access: Int64, changes: Int64), now: Double, wall: Date,
                                   into actions: inout [EngineAction]) {
        guard connection.pendingSubscribes[event] == generation else { return }
        connection.pendingSubscribes[event] = nil
        // A closing connection joins no channel (see `close`); one draining is told so.
        guard connection.isOpen else {
            reply(connection, .error(ref: ref, .unavailable("This server is shutting down; reconnect and subscribe again.")),
                  now: now, into: &actions)
            return
        }
        if let change = recentAccess[AccessKey(event: event, user: connection.identity.userID)],
           change.seq > through.access, change.level == nil {
            // Answered as the database path answers an event one cannot see (no existence leak).
            reply(connection, .error(ref: ref, .noSuchEvent(event)), now: now, into: &actions)
            return
        }
        switch hub.subscribe(connection.id, to: event, historyThrough: through.history, changesThrough: through.changes, now: wall) {
        case .subscribed(let catchUp):
            connection.levels[event] = level ?? .staff
            // Missed edits and retracts go first: `subscribed` then sets the unread count, which
            // already leaves the retracted ones out (after it, a client would count them twice).
            for change in followUps { enqueue(connection, change, now: now, into: &actions) }
            enqueue(connection, frame, now: now, into: &actions)
            // Then what was handed on after the snapshot: messages, then edits and retracts
            // (those leave the unread count to the client, which counted the message as unread).
            for missed in catchUp { enqueue(connection, missed, now: now, into: &actions) }
        case .lagged:
            reply(connection, .error(ref: ref, .unavailable(
                "Messages arrived faster than this subscription could be lined up; subscribe again with since_seq set to the last seq you have.")),
                now: now, into: &actions)
        }
    }
}
