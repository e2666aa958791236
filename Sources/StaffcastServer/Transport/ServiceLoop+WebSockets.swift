import CLibWebSockets
import CStaffcastSocket
import Foundation
import StaffcastCore

/// What every WebSocket of a service loop goes through, ws or wss
/// (`ServiceLoop+FramedWebSockets` reads their frames): opened, written (frames the engine
/// hands out, pings), closed, and the engine's actions and notices carried out. Runs on the
/// loop's thread only.
extension ServiceLoop {
    /// Connection ids are unique across loops: the loop's index in the low bits.
    func newConnectionID() -> Int {
        defer { nextConnection += 1 }
        return nextConnection << 8 | index
    }

    /// A WebSocket (ws or wss) is open: the engine and the gatekeeper's slot take it on.
    func opened(_ socket: FramedWebSocket, peer: String, subscribe: URLSubscribe?) {
        let id = socket.id
        let admission = socket.admission
        sockets[id] = socket
        metrics.connectionsOpened.increment()
        let now = Self.monotonicNow()
        perform(engine.connectionOpened(id, identity: admission.identity, token: admission.digest,
                                        peer: peer, subscribe: subscribe, now: now, wall: Date()))
        // A revoke applied between the upgrade decision and now: close at once.
        if !gatekeeper.isValid(admission.digest) {
            perform(engine.committed(CommittedBatch(revokedTokens: [admission.digest]), now: now, wall: Date()))
        }
        logger.info("connection opened", metadata: ["conn": LogValue.number(id), "user_id": LogValue.id(admission.identity.userID),
                                                    "peer": "\(peer)", "loop": LogValue.number(index)])
    }

    /// Carries out a write step of the engine on a WebSocket; the `101` still waiting goes out
    /// in front of the first frames, in the same write. -1: the write failed (the caller resets
    /// the socket).
    func write(_ step: WriteStep<OutFrame>, _ socket: FramedWebSocket) -> Int32 {
        var answer = socket.handshakeAnswer
        socket.handshakeAnswer = nil
        if let bytes = answer {
            // Alone when there are no frames to go with it, or they would not fit behind it.
            var fits = false
            if case .frames(let frames, _) = step {
                fits = bytes.count + frames.reduce(0) { $0 + $1.wireLength } <= configuration.engine.maxWriteBytes
            }
            if !fits {
                if !send(socket, bytes) { return -1 }
                answer = nil
            }
        }
        switch step {
        case .idle:
            return 0
        case .ping(let more):
            if !send(socket, WebSocketControlFrame.heartbeat) { return -1 }
            if more { askWritable(socket) }
            return 0
        case .frames(let frames, let more):
            if frames.count == 1, answer == nil {
                if !send(socket, frames[0].wire, frames[0].wireLength) { return -1 }
            } else {
                // Several frames, one write: they share one send() instead of one each.
                var offset = OutFrame.headroom
                if let answer {
                    answer.withUnsafeBufferPointer { (writeBuffer + offset).update(from: $0.baseAddress!, count: $0.count) }
                    offset += answer.count
                }
                for frame in frames {
                    (writeBuffer + offset).update(from: frame.wire, count: frame.wireLength)
                    offset += frame.wireLength
                }
                if !send(socket, writeBuffer + OutFrame.headroom, offset - OutFrame.headroom) { return -1 }
            }
            metrics.deliveries.increment(by: Int64(frames.count))
            metrics.socketWrites.increment()
            if writeTrace != nil { traceWritten(frames) }
            if holdsOutput(socket) {
                // The socket took part of it; the rest is held and goes first once the socket
                // is writable, then we are called again. Until then the engine's write-stall
                // deadline runs.
                engine.writeIncomplete(socket.id)
                askWritable(socket)
            } else if more {
                askWritable(socket)
            }
            return 0
        case .close(let code, let reason):
            return framedClose(socket, code: code, reason: reason)
        }
    }

    /// A WebSocket (ws or wss) has closed: the engine forgets it and its slot is released.
    func forget(_ id: Int) {
        guard let socket = sockets.removeValue(forKey: id) else { return }
        let state = engine.connection(id)
        var closedBy = "client"
        if case .closing(let code, let reason, _, _)? = state?.phase { closedBy = "server: \(code) \(reason)" }
        let seconds = state.map { (Date().timeIntervalSince($0.openedAt) * 10).rounded() / 10 } ?? 0
        engine.connectionClosed(id)
        gatekeeper.release(socket.admission)
        logger.info("connection closed", metadata: ["conn": LogValue.number(id), "user_id": LogValue.id(socket.admission.identity.userID),
                                                    "seconds": LogValue.number(seconds), "closed_by": "\(closedBy)"])
    }

    // MARK: engine actions

    func perform(_ actions: [EngineAction]) {
        for action in actions {
            switch action {
            case .wantWritable(let id):
                if let socket = sockets[id] { askWritable(socket) }
            case .drop(let id):
                // Reset rather than close gracefully: a peer that does not read would hold the
                // kernel's send queue (and what we hold) for minutes otherwise.
                if let socket = sockets[id] { _ = framedEnd(socket, reset: true) }
            case .pauseReading(let id):
                if let socket = sockets[id] { setReading(socket, false) }
            case .resumeReading(let id):
                if let socket = sockets[id] { setReading(socket, true) }
            case .run(let job):
                if job.isGroupCommittedSend {
                    // Gathered until this turn of the loop ends (`turnEnded`), then one call:
                    // sends read in one turn commit together, and none waits for another turn.
                    gatheredSends.append(GatheredSend(job: job, receivedAt: frameReceivedAt))
                } else if case .subscribe = job.request {
                    // Gathered until the flush runs from the loop's backlog, then answered in
                    // batches: in a storm the backlog is busy, so batches grow to hundreds
                    // (flushing at every turn's end halved them and doubled PostgreSQL's CPU).
                    if subscribes.isEmpty { post { $0.flushSubscribes() } }
                    subscribes.append(job)
                } else if !runner.submit(job, replyTo: self) {
                    perform(engine.jobRefused(connection: job.connection, ref: job.ref, now: Self.monotonicNow(),
                                              wasSend: job.isSend))
                }
            case .notice(let notice):
                log(notice)
            }
        }
    }

    func log(_ notice: EngineNotice) {
        switch notice {
        case .slowClient(let id, let queued):
            metrics.slowClientsClosed.increment()
            logger.warning("closing slow client", metadata: ["conn": LogValue.number(id), "queued": LogValue.number(queued)])
        case .writeStalled(let id):
            metrics.slowClientsClosed.increment()
            logger.warning("dropping a client that stopped reading", metadata: ["conn": LogValue.number(id)])
        case .heartbeatTimeout(let id):
            logger.info("closing silent connection", metadata: ["conn": LogValue.number(id)])
        case .accessRevoked(let id, let event):
            logger.info("subscription ended: access revoked", metadata: ["conn": LogValue.number(id), "event_id": LogValue.id(event)])
        case .tokenRevoked(let id):
            logger.info("closing connection: token revoked", metadata: ["conn": LogValue.number(id)])
        case .frameRefused(let id, let code):
            metrics.error(code: code.rawValue)
            logger.info("frame refused", metadata: ["conn": LogValue.number(id), "code": "\(code)"])
        }
    }
}
