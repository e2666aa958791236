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
    public internal(set) var hub: Hub<Frame>
    public internal(set) var connections: [Int: ConnectionState<Frame>] = [:]
    public internal(set) var stats = EngineStats()
    /// The messages the last `committed` published, with how many of this engine's
    /// connections each was queued for (the transport logs them; replaced on every call).
    public internal(set) var fannedOut: [FanOut] = []

    public struct FanOut: Sendable, Equatable {
        public var seq: Int64
        public var eventID: UUID
        public var recipients: Int
    }
    public internal(set) var draining = false
    /// Recent access changes by (event, user): a subscribe whose database check predates a
    /// revoke already applied here is refused.
    var recentAccess: [AccessKey: (seq: Int64, level: AccessLevel?, at: Double)] = [:]
    var nextGeneration = 1

    struct AccessKey: Hashable {
        var event: UUID
        var user: UUID
    }

    /// `publishedThrough` and `changedThrough`: where the message and message-change logs
    /// ended when the server started following them.
    public init(configuration: EngineConfiguration, publishedThrough: Int64, changedThrough: Int64 = 0) {
        self.configuration = configuration
        self.hub = Hub(publishedThrough: publishedThrough, changedThrough: changedThrough, recentCapacity: configuration.recentWindow)
    }

    public func connection(_ id: Int) -> ConnectionState<Frame>? { connections[id] }

    // MARK: connections

    /// A WebSocket finished its upgrade: it gets `hello`. With a subscribe in its URL, that
    /// subscribe runs at once and `hello` waits for its answer (at most `urlSubscribeHold`):
    /// both leave in one write.
    public func connectionOpened(_ id: Int, identity: Identity, token: TokenDigest?, peer: String,
                                 subscribe: URLSubscribe? = nil, now: Double, wall: Date) -> [EngineAction] {
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
        if subscribe != nil { connection.writesHeldUntil = now + configuration.urlSubscribeHold }
        enqueue(connection, Frame(text: ServerFrame.hello(user: identity, serverTime: wall, node: configuration.nodeID).encoded()),
                now: now, into: &actions)
        if let subscribe {
            dispatch(connection, subscribe.frame, now: now, into: &actions)
            // Answered at once (refused before reaching the database): nothing to wait for.
            if connection.inFlight == 0 { releaseWrites(connection, into: &actions) }
        }
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

    func wantsMore(_ connection: ConnectionState<Frame>) -> Bool {
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
            if let until = connection.writesHeldUntil, now >= until { releaseWrites(connection, into: &actions) }
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
            if connection.writesHeldUntil == nil { requestWritable(connection, into: &actions) }
        }
    }

    /// What was held for a subscribe in the URL may go now (its answer came, or the hold ran out).
    func releaseWrites(_ connection: ConnectionState<Frame>, into actions: inout [EngineAction]) {
        guard connection.writesHeldUntil != nil else { return }
        connection.writesHeldUntil = nil
        if !connection.outbound.isEmpty { requestWritable(connection, into: &actions) }
    }

    func reply(_ connection: ConnectionState<Frame>, _ frame: ServerFrame, now: Double, into actions: inout [EngineAction]) {
        enqueue(connection, Frame(text: frame.encoded()), now: now, into: &actions)
    }

    func close(_ connection: ConnectionState<Frame>, _ code: UInt16, _ reason: String, afterFlush: Bool, now: Double,
                       into actions: inout [EngineAction]) {
        if case .closing(_, _, false, _) = connection.phase { return }
        releaseHeld(connection, answered: afterFlush, now: now, into: &actions)
        let deadline = now + (afterFlush ? max(configuration.closeTimeout, configuration.writeStallTimeout) : configuration.closeTimeout)
        connection.phase = .closing(code: code, reason: reason, afterFlush: afterFlush, deadline: deadline)
        connection.writesHeldUntil = nil
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
