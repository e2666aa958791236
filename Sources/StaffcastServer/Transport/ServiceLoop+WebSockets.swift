import CLibWebSockets
import CStaffcastSocket
import Foundation
import StaffcastCore

/// The WebSockets of a service loop (ws once libwebsockets has done the handshake; wss served
/// on their TLS wsi, `ServiceLoop+WSS`): opened,
/// written (frames the engine hands out, pings), closed, and the engine's actions and notices
/// carried out. Runs on the loop's thread only.
extension ServiceLoop {
    static func connectionID(_ user: UnsafeMutableRawPointer?) -> Int? {
        guard let id = user?.load(as: Int.self), id != 0 else { return nil }
        return id
    }

    func established(_ wsi: OpaquePointer, _ user: UnsafeMutableRawPointer?) -> Int32 {
        guard let admission = upgrading.removeValue(forKey: UInt(bitPattern: wsi)), let user else { return -1 }
        let id = newConnectionID()
        user.storeBytes(of: id, as: Int.self)
        opened(id, wsi, admission, peer: LWSContext.peer(wsi))
        return 0
    }

    /// Connection ids are unique across loops: the loop's index in the low bits.
    func newConnectionID() -> Int {
        defer { nextConnection += 1 }
        return nextConnection << 8 | index
    }

    /// A WebSocket (ws or wss) is open: the engine and the gatekeeper's slot take it on.
    func opened(_ id: Int, _ wsi: OpaquePointer, _ admission: Gatekeeper.Admission, peer: String) {
        sockets[id] = (wsi, admission)
        metrics.connectionsOpened.increment()
        let now = Self.monotonicNow()
        perform(engine.connectionOpened(id, identity: admission.identity, token: admission.digest,
                                        peer: peer, now: now, wall: Date()))
        // A revoke applied between the upgrade decision and now: close at once.
        if !gatekeeper.isValid(admission.digest) {
            perform(engine.committed(CommittedBatch(revokedTokens: [admission.digest]), now: now, wall: Date()))
        }
        logger.info("connection opened", metadata: ["conn": LogValue.number(id), "user_id": LogValue.id(admission.identity.userID),
                                                    "peer": "\(peer)", "loop": LogValue.number(index)])
    }

    func writable(_ wsi: OpaquePointer, _ user: UnsafeMutableRawPointer?) -> Int32 {
        guard let id = Self.connectionID(user) else { return -1 }
        return write(engine.writable(id, now: Self.monotonicNow()), id, wsi, wss: nil)
    }

    /// Carries out a write step of the engine on a WebSocket: a libwebsockets one, or one
    /// served on its TLS wsi (`wss`), whose ping and close frames are written whole here.
    /// -1: libwebsockets closes the socket.
    func write(_ step: WriteStep<OutFrame>, _ id: Int, _ wsi: OpaquePointer, wss socket: TLSWebSocket?) -> Int32 {
        if let socket {
            switch step {
            case .ping(let more):
                if !writeRaw(wsi, WebSocketControlFrame.heartbeat) { return -1 }
                if more { lws_callback_on_writable(wsi) }
                return 0
            case .close(let code, let reason):
                return wssClose(socket, code: code, reason: reason)
            case .idle, .frames:
                break // as for every WebSocket, below
            }
        }
        switch step {
        case .idle:
            return 0
        case .ping(let more):
            // Through lws's own ping framing (in this loop's scratch buffer), so that lws
            // hands the peer's pong back as LWS_CALLBACK_RECEIVE_PONG.
            let payload = writeBuffer + OutFrame.headroom
            payload[0] = UInt8(ascii: "h")
            payload[1] = UInt8(ascii: "b")
            if lws_write(wsi, payload, 2, LWS_WRITE_PING) < 2 { return -1 }
            if more { lws_callback_on_writable(wsi) }
            return 0
        case .frames(let frames, let more):
            if frames.count == 1 {
                if !write(wsi, frames[0].wire, frames[0].wireLength) { return -1 }
            } else {
                // Several frames, one write: they share one send() instead of one each.
                var offset = OutFrame.headroom
                for frame in frames {
                    (writeBuffer + offset).update(from: frame.wire, count: frame.wireLength)
                    offset += frame.wireLength
                }
                if !write(wsi, writeBuffer + OutFrame.headroom, offset - OutFrame.headroom) { return -1 }
            }
            metrics.deliveries.increment(by: Int64(frames.count))
            metrics.socketWrites.increment()
            if writeTrace != nil { traceWritten(frames) }
            if lws_partial_buffered(wsi) != 0 {
                // The socket took part of it; lws keeps the rest and calls back once it is
                // sent. Until then the engine's write-stall deadline runs.
                engine.writeIncomplete(id)
                lws_callback_on_writable(wsi)
            } else if more {
                lws_callback_on_writable(wsi)
            }
            return 0
        case .close(let code, let reason):
            var bytes = Array(reason.utf8.prefix(120))
            lws_close_reason(wsi, lws_close_status(rawValue: UInt32(code)), &bytes, bytes.count)
            return -1
        }
    }

    /// Writes whole WebSocket frames as they are (`LWS_WRITE_RAW`: the frames carry their
    /// headers, so shared frames are never written into). What the socket does not take now,
    /// libwebsockets keeps and sends before the next writable callback.
    func write(_ wsi: OpaquePointer, _ bytes: UnsafePointer<UInt8>, _ count: Int) -> Bool {
        lws_write(wsi, UnsafeMutablePointer(mutating: bytes), count, staffcast_lws_write_raw()) >= count
    }

    func closed(_ wsi: OpaquePointer, _ user: UnsafeMutableRawPointer?) {
        guard let id = Self.connectionID(user) else { return }
        forget(id)
        user?.storeBytes(of: 0, as: Int.self)
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
                if let wsi = sockets[id]?.wsi { lws_callback_on_writable(wsi) }
            case .drop(let id):
                guard let wsi = sockets[id]?.wsi else { continue }
                // Reset rather than close gracefully: a peer that does not read would hold the
                // kernel's send queue (and libwebsockets' buffer) for minutes otherwise.
                let fd = lws_get_socket_fd(wsi)
                if fd >= 0 { sc_set_linger_zero(fd) }
                wss[UInt(bitPattern: wsi)]?.ended = true
                lws_set_timeout(wsi, PENDING_TIMEOUT_USER_OK, staffcast_lws_kill_async())
            case .pauseReading(let id):
                if let wsi = sockets[id]?.wsi { lws_rx_flow_control(wsi, 0) }
            case .resumeReading(let id):
                if let wsi = sockets[id]?.wsi { lws_rx_flow_control(wsi, 1) }
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
                    perform(engine.jobRefused(connection: job.connection, ref: job.ref, now: Self.monotonicNow()))
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
