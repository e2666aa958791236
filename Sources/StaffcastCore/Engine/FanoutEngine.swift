import Foundation

/// The fan-out core of one service loop: its share of the hub, each connection's state, the
/// line-up of subscribes with live fan-out, the slow-client policy, heartbeats and rate limits.
///
/// A pure state machine in the manner of postgres-nio's: it takes events (a connection opened
/// or closed, a frame received, a socket writable, a job answered, a batch committed, a tick)
/// and returns actions (`EngineAction`) for its transport; it does no I/O, starts no thread
/// and reads no clock (every method is given `now`, monotonic seconds, and `wall` where a date
/// is needed). Not thread-safe: one service loop owns one engine and calls it from its thread.
public final class FanoutEngine<Frame: WireFrame> {
    public let configuration: EngineConfiguration
    public private(set) var hub: Hub<Frame>
    public private(set) var connections: [Int: ConnectionState<Frame>] = [:]
    public private(set) var stats = EngineStats()
    /// The messages the last `committed` published, with how many of this engine's
    /// connections each was queued for (the transport logs them; replaced on every call).
    public private(set) var fannedOut: [FanOut] = []

    public struct FanOut: Sendable, Equatable {
        public var seq: Int64
        public var eventID: UUID
        public var recipients: Int
    }
    public private(set) var draining = false
    /// Recent access changes by (event, user): a subscribe whose database check predates a
    /// revoke already applied here is refused.
    private var recentAccess: [AccessKey: (seq: Int64, level: AccessLevel?, at: Double)] = [:]
    private var nextGeneration = 1

    struct AccessKey: Hashable {
        var event: UUID
        var user: UUID
    }

    public init(configuration: EngineConfiguration, publishedThrough: Int64) {
        self.configuration = configuration
        self.hub = Hub(publishedThrough: publishedThrough, recentCapacity: configuration.recentWindow)
    }

    public func connection(_ id: Int) -> ConnectionState<Frame>? { connections[id] }

    // MARK: connections

    /// A WebSocket finished its upgrade: it gets `hello`.
    public func connectionOpened(_ id: Int, identity: Identity, token: TokenDigest?, peer: String,
                                 now: Double, wall: Date) -> [EngineAction] {
        let connection = ConnectionState<Frame>(id: id, identity: identity, token: token, peer: peer,
                                                configuration: configuration, now: now, wall: wall)
        connections[id] = connection
        hub.connect(id, user: identity.userID)
        stats.connectionsOpened += 1
        var actions: [EngineAction] = []
        if draining {
            close(connection, 1001, "server shutting down; reconnect", afterFlush: false, now: now, into: &actions)
            return actions
        }
        enqueue(connection, Frame(text: ServerFrame.hello(user: identity, serverTime: wall, node: configuration.nodeID).encoded()),
                now: now, into: &actions)
        return actions
    }

    /// The socket is gone (closed by either side, or dropped): forget it.
    public func connectionClosed(_ id: Int) {
        guard connections.removeValue(forKey: id) != nil else { return }
        hub.disconnect(id)
        stats.connectionsClosed += 1
    }

    /// Every connection closed and nothing left: a draining loop may stop.
    public var isDrained: Bool { draining && connections.isEmpty }

    /// Graceful stop: no new work; every connection gets its queue, then 1001.
    public func beginDrain(now: Double) -> [EngineAction] {
        draining = true
        var actions: [EngineAction] = []
        for connection in connections.values {
            close(connection, 1001, "server shutting down; reconnect", afterFlush: true, now: now, into: &actions)
        }
        return actions
    }

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

    private func dispatch(_ connection: ConnectionState<Frame>, _ frame: ClientFrame, now: Double, into actions: inout [EngineAction]) {
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
        case .send(let request):
            guard connection.sendBucket.take(now: now) else {
                reply(connection, .error(ref: ref, Self.sendRateLimited(configuration)), now: now, into: &actions)
                return
            }
            run(connection, ref: ref, .send(request), now: now, into: &actions)
        case .markRead(let messageID):
            run(connection, ref: ref, .markRead(messageID: messageID), now: now, into: &actions)
        case .markAllRead(let eventID, let throughSeq):
            run(connection, ref: ref, .markAllRead(eventID: eventID, throughSeq: throughSeq), now: now, into: &actions)
        case .markNotificationRead(let notificationID):
            run(connection, ref: ref, .markNotificationRead(notificationID: notificationID), now: now, into: &actions)
        case .history(let event, let beforeSeq, let afterSeq, let limit):
            run(connection, ref: ref, .history(eventID: event, beforeSeq: beforeSeq, afterSeq: afterSeq, limit: limit),
                now: now, into: &actions)
        case .listEvents:
            run(connection, ref: ref, .listEvents, now: now, into: &actions)
        case .edit(let messageID, let message):
            run(connection, ref: ref, .edit(messageID: messageID, message: message), now: now, into: &actions)
        case .retract(let messageID):
            run(connection, ref: ref, .retract(messageID: messageID), now: now, into: &actions)
        case .reply(let request):
            run(connection, ref: ref, .reply(request), now: now, into: &actions)
        case .answer(let messageID, let option):
            run(connection, ref: ref, .answer(messageID: messageID, option: option), now: now, into: &actions)
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

    /// A job's answer came back (in any order relative to other jobs).
    public func jobCompleted(connection id: Int, ref: String?, outcome: JobOutcome<Frame>, now: Double, wall: Date) -> [EngineAction] {
        guard let connection = connections[id] else { return [] }
        connection.inFlight = max(0, connection.inFlight - 1)
        var actions: [EngineAction] = []
        switch outcome {
        case .reply(let frame):
            enqueue(connection, frame, now: now, into: &actions)
        case .failed(let error):
            reply(connection, .error(ref: ref, error), now: now, into: &actions)
        case .subscribed(let event, let generation, let frame, let historyThrough, let accessThrough, let level):
            completeSubscribe(connection, event: event, generation: generation, ref: ref, reply: frame, level: level,
                              historyThrough: historyThrough, accessThrough: accessThrough, now: now, wall: wall, into: &actions)
        }
        runHeld(connection, now: now, into: &actions)
        // A connection closing after its requests are answered may close now.
        if case .closing(_, _, true, _) = connection.phase, connection.inFlight == 0 {
            requestWritable(connection, into: &actions)
        }
        return actions
    }

    /// The runner could not take the job (its queue is full): nothing was done.
    public func jobRefused(connection id: Int, ref: String?, now: Double) -> [EngineAction] {
        jobCompleted(connection: id, ref: ref, outcome: .failed(.unavailable(
            "The server is overloaded right now; nothing was done. Try again in a moment.")), now: now, wall: Date(timeIntervalSince1970: 0))
    }

    /// Joins a connection to an event's channel once its snapshot is ready, lining it up with
    /// live fan-out so nothing is missed or sent twice.
    private func completeSubscribe(_ connection: ConnectionState<Frame>, event: UUID, generation: Int, ref: String?, reply frame: Frame,
                                   level: AccessLevel?,
                                   historyThrough: Int64, accessThrough: Int64, now: Double, wall: Date,
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
           change.seq > accessThrough, change.level == nil {
            // Answered as the database path answers an event one cannot see (no existence leak).
            reply(connection, .error(ref: ref, .noSuchEvent(event)), now: now, into: &actions)
            return
        }
        switch hub.subscribe(connection.id, to: event, historyThrough: historyThrough, now: wall) {
        case .subscribed(let catchUp):
            connection.levels[event] = level ?? .staff
            enqueue(connection, frame, now: now, into: &actions)
            for missed in catchUp { enqueue(connection, missed, now: now, into: &actions) }
        case .lagged:
            reply(connection, .error(ref: ref, .unavailable(
                "Messages arrived faster than this subscription could be lined up; subscribe again with since_seq set to the last seq you have.")),
                now: now, into: &actions)
        }
    }

    // MARK: fan-out

    /// Applies what was committed: token and access changes first, then messages (each frame
    /// queued, unchanged, on every subscriber), then notifications.
    public func committed(_ batch: CommittedBatch<Frame>, now: Double, wall: Date) -> [EngineAction] {
        var actions: [EngineAction] = []
        fannedOut.removeAll(keepingCapacity: true)
        if !batch.revokedTokens.isEmpty {
            for connection in connections.values where connection.isOpen {
                guard let token = connection.token, batch.revokedTokens.contains(token) else { continue }
                stats.tokenRevocationsClosed += 1
                actions.append(.notice(.tokenRevoked(connection: connection.id)))
                close(connection, 4401, "token revoked", afterFlush: false, now: now, into: &actions)
            }
        }
        for change in batch.access {
            recentAccess[AccessKey(event: change.eventID, user: change.userID)] = (change.seq, change.level, now)
            if let level = change.level {
                // A changed level: receipts follow it (an admin made staff stops getting them).
                for id in hub.connections(ofUser: change.userID) where connections[id]?.levels[change.eventID] != nil {
                    connections[id]?.levels[change.eventID] = level
                }
            }
            guard let frame = change.revokedFrame else { continue }
            for id in hub.revoke(user: change.userID, from: change.eventID) {
                guard let connection = connections[id] else { continue }
                connection.levels[change.eventID] = nil
                actions.append(.notice(.accessRevoked(connection: id, event: change.eventID)))
                enqueue(connection, frame, now: now, into: &actions)
            }
        }
        for message in batch.messages {
            let recipients = hub.publish(seq: message.seq, eventID: message.eventID, expiresAt: message.expiresAt, frame: message.frame,
                                         audience: message.audience)
            for id in recipients {
                if let connection = connections[id] { enqueue(connection, message.frame, now: now, into: &actions) }
            }
            stats.messagesFannedOut += 1
            fannedOut.append(FanOut(seq: message.seq, eventID: message.eventID, recipients: recipients.count))
        }
        // Edits and retracts (to every subscriber of the event, like the message itself) and
        // replies (to the subscribers among the event's admins and owners).
        for change in batch.eventFrames {
            for id in hub.subscribers(of: change.eventID) {
                guard let connection = connections[id], change.reaches(connection.identity.userID) else { continue }
                enqueue(connection, change.frame, now: now, into: &actions)
            }
        }
        for notification in batch.notifications {
            for id in hub.connections(ofUser: notification.userID) {
                if let connection = connections[id] { enqueue(connection, notification.frame, now: now, into: &actions) }
            }
        }
        // One look at an event's subscribers per batch, not per receipt: a read storm brings
        // thousands of receipts of one event in a batch, and scanning 10,000 subscribers for each
        // was quadratic (about 18 s of a loop's CPU for 10,000 marks). Access changes of the
        // batch were applied above, so the audience cannot change within it.
        var receiptAudiences: [UUID: [Int]] = [:]
        for receipt in batch.receipts {
            let audience: [Int]
            if let known = receiptAudiences[receipt.eventID] {
                audience = known
            } else {
                audience = receiptAudience(of: receipt.eventID)
                receiptAudiences[receipt.eventID] = audience
            }
            for id in audience {
                if let connection = connections[id] { enqueue(connection, receipt.frame, now: now, into: &actions) }
            }
        }
        for reminder in batch.reminders {
            for id in reminderAudience(users: reminder.users, event: reminder.eventID) {
                if let connection = connections[id] { enqueue(connection, reminder.frame, now: now, into: &actions) }
            }
        }
        return actions
    }

    /// Who gets a `receipt` of an event: connections subscribed to it whose user is an admin
    /// or owner of it (as of the last access change applied). Staff never do.
    public func receiptAudience(of event: UUID) -> [Int] {
        hub.subscribers(of: event).filter { connections[$0]?.levels[event]?.maySeeReceipts == true }.sorted()
    }

    /// Who gets a `reminder`: the connections of the named non-readers that are subscribed to
    /// the message's event (so only people who still have access, on a screen for that event).
    public func reminderAudience(users: [UUID], event: UUID) -> [Int] {
        users.flatMap { user in hub.connections(ofUser: user).filter { hub.isSubscribed($0, to: event) } }.sorted()
    }

    // MARK: writing

    /// The socket of `id` can take bytes: what to write. Frames go out several at a time (up
    /// to `maxWriteBytes`), so a busy subscriber costs one write per burst, not per frame.
    public func writable(_ id: Int, now: Double) -> WriteStep<Frame> {
        guard let connection = connections[id] else { return .idle }
        connection.writableRequested = false
        if connection.transportBacklog {
            connection.transportBacklog = false
            connection.lastWriteProgress = now
        }
        if case .closing(let code, let reason, let afterFlush, _) = connection.phase {
            if !afterFlush || (connection.outbound.isEmpty && connection.inFlight == 0) {
                return .close(code: code, reason: reason)
            }
        }
        if connection.pingDue {
            connection.pingDue = false
            connection.pingSentAt = now
            return .ping(more: wantsMore(connection))
        }
        guard !connection.outbound.isEmpty else { return .idle }
        var frames: [Frame] = []
        var bytes = 0
        while let next = connection.outbound.first, frames.isEmpty || bytes + next.wireLength <= configuration.maxWriteBytes {
            _ = connection.outbound.popFirst()
            frames.append(next)
            bytes += next.wireLength
        }
        connection.framesWritten += frames.count
        connection.lastWriteProgress = now
        stats.framesDelivered += frames.count
        return .frames(frames, more: wantsMore(connection))
    }

    /// The transport could not hand the last write to the socket whole and holds the rest:
    /// the peer is not reading it yet. The write-stall deadline runs until `writable` is
    /// called again (the transport asks for that once its own buffer has drained).
    public func writeIncomplete(_ id: Int) {
        connections[id]?.transportBacklog = true
    }

    /// What the kernel still holds unacknowledged for this socket. Bytes that leave count as
    /// progress; a queue that does not shrink keeps the write-stall deadline running, so a
    /// peer that stops reading is dropped even when everything left the engine's queue.
    public func socketQueued(_ id: Int, bytes: Int, now: Double) {
        guard let connection = connections[id] else { return }
        if bytes < connection.socketQueued || connection.socketQueued == 0 { connection.lastWriteProgress = now }
        connection.socketQueued = bytes
    }

    private func wantsMore(_ connection: ConnectionState<Frame>) -> Bool {
        let more: Bool
        if case .closing(_, _, let afterFlush, _) = connection.phase {
            more = !afterFlush || connection.inFlight == 0 || !connection.outbound.isEmpty
        } else {
            more = !connection.outbound.isEmpty || connection.pingDue
        }
        if more { connection.writableRequested = true }
        return more
    }

    // MARK: time

    /// Once a second: pings for silent connections, closes for those silent twice as long,
    /// and drops for readers that stopped reading or missed their close deadline.
    public func tick(now: Double, wall: Date) -> [EngineAction] {
        var actions: [EngineAction] = []
        let interval = configuration.heartbeatInterval
        for connection in connections.values {
            if case .closing(_, _, _, let deadline) = connection.phase {
                if now >= deadline { actions.append(.drop(connection.id)) }
                continue
            }
            if !connection.outbound.isEmpty || connection.transportBacklog || connection.socketQueued > 0,
               now - connection.lastWriteProgress >= configuration.writeStallTimeout {
                stats.stalledClientsDropped += 1
                actions.append(.notice(.writeStalled(connection: connection.id)))
                connection.phase = .closing(code: 4008, reason: "not reading", afterFlush: false, deadline: now)
                connection.outbound = OutboundQueue(maxFrames: configuration.outboundMaxFrames, maxBytes: configuration.outboundMaxBytes)
                actions.append(.drop(connection.id))
                continue
            }
            let silent = now - connection.lastHeard
            // Closed when its ping went unanswered for a whole interval (so after at least two
            // intervals of silence), or, if the ping could not even be written, after three.
            // Timed from the ping rather than from the silence alone, so that a one-second tick
            // never closes a peer whose pong is on its way.
            let pingUnanswered = connection.pingSentAt.map { now - $0 >= interval && silent >= 2 * interval } ?? false
            if pingUnanswered || silent >= 3 * interval {
                stats.heartbeatTimeouts += 1
                actions.append(.notice(.heartbeatTimeout(connection: connection.id)))
                close(connection, 1001, "no answer to heartbeat", afterFlush: false, now: now, into: &actions)
            } else if silent >= interval, connection.pingSentAt == nil, !connection.pingDue {
                connection.pingDue = true
                requestWritable(connection, into: &actions)
            }
        }
        if recentAccess.count > 1_000 {
            recentAccess = recentAccess.filter { now - $0.value.at < 300 }
        }
        return actions
    }

    // MARK: queueing

    /// Queues an encoded frame. A queue that is full means the client does not keep up: it is
    /// closed with 4008 (what it had queued is dropped) and catches up on reconnect.
    public func enqueue(_ connection: ConnectionState<Frame>, _ frame: Frame, now: Double, into actions: inout [EngineAction]) {
        guard connection.isOpen || connection.phase.isAfterFlush else { return }
        let wasEmpty = connection.outbound.isEmpty
        guard connection.outbound.push(frame, bytes: frame.wireLength) else {
            stats.slowClientsClosed += 1
            actions.append(.notice(.slowClient(connection: connection.id, queuedFrames: connection.outbound.count)))
            connection.outbound = OutboundQueue(maxFrames: configuration.outboundMaxFrames, maxBytes: configuration.outboundMaxBytes)
            close(connection, 4008, "too slow: reconnect and catch up with since_seq", afterFlush: false, now: now, into: &actions)
            return
        }
        if wasEmpty {
            connection.lastWriteProgress = now
            requestWritable(connection, into: &actions)
        }
    }

    func reply(_ connection: ConnectionState<Frame>, _ frame: ServerFrame, now: Double, into actions: inout [EngineAction]) {
        enqueue(connection, Frame(text: frame.encoded()), now: now, into: &actions)
    }

    private func close(_ connection: ConnectionState<Frame>, _ code: UInt16, _ reason: String, afterFlush: Bool, now: Double,
                       into actions: inout [EngineAction]) {
        if case .closing(_, _, false, _) = connection.phase { return }
        releaseHeld(connection, answered: afterFlush, now: now, into: &actions)
        let deadline = now + (afterFlush ? max(configuration.closeTimeout, configuration.writeStallTimeout) : configuration.closeTimeout)
        connection.phase = .closing(code: code, reason: reason, afterFlush: afterFlush, deadline: deadline)
        hub.disconnect(connection.id)
        hub.connect(connection.id, user: connection.identity.userID) // no subscriptions while closing
        requestWritable(connection, into: &actions)
    }

    func requestWritable(_ connection: ConnectionState<Frame>, into actions: inout [EngineAction]) {
        guard !connection.writableRequested else { return }
        connection.writableRequested = true
        actions.append(.wantWritable(connection.id))
    }
}

extension ConnectionState.Phase {
    var isAfterFlush: Bool {
        if case .closing(_, _, true, _) = self { return true }
        return false
    }
}
