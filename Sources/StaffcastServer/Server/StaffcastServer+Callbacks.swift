import CLibWebSockets
import Foundation
import StaffcastCore

/// libwebsockets callbacks, on the service thread. Per-session data holds one `Int`: the id of
/// the `Connection` (WebSocket) or `HTTPExchange` (HTTP request) it belongs to.
extension StaffcastServer {
    func handle(_ wsi: OpaquePointer, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?,
                _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
        switch reason {
        case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
            drainInbox()
            return 0
        case LWS_CALLBACK_HTTP_CONFIRM_UPGRADE:
            return confirmUpgrade(wsi)
        case LWS_CALLBACK_ESTABLISHED:
            return established(wsi, user)
        case LWS_CALLBACK_RECEIVE:
            return receive(wsi, user, input, length)
        case LWS_CALLBACK_SERVER_WRITEABLE:
            return writable(wsi, user)
        case LWS_CALLBACK_CLOSED:
            closed(user)
            return 0
        case LWS_CALLBACK_RECEIVE_PONG:
            receivedPong(user)
            return 0
        case LWS_CALLBACK_HTTP:
            return httpRequest(wsi, user, input.map { String(cString: $0.assumingMemoryBound(to: CChar.self)) } ?? "/")
        case LWS_CALLBACK_HTTP_BODY:
            httpBody(user, input, length)
            return 0
        case LWS_CALLBACK_HTTP_BODY_COMPLETION:
            httpBodyComplete(user)
            return 0
        case LWS_CALLBACK_HTTP_WRITEABLE:
            return httpWritable(wsi, user)
        case LWS_CALLBACK_CLOSED_HTTP:
            httpDropped(user)
            return 0
        default:
            return lws_callback_http_dummy(wsi, reason, user, input, length)
        }
    }

    static func sessionID(_ user: UnsafeMutableRawPointer?) -> Int { user?.load(as: Int.self) ?? 0 }

    func makeID() -> Int {
        defer { nextID += 1 }
        return nextID
    }

    // MARK: WebSocket

    /// Checks path and token before the upgrade, so a bad token gets a plain HTTP 401.
    private func confirmUpgrade(_ wsi: OpaquePointer) -> Int32 {
        let path = LWSTransport.header(wsi, WSI_TOKEN_GET_URI) ?? ""
        func refuse(_ error: StaffcastError) -> Int32 {
            let body = HTTPResponse.error(error)
            return LWSTransport.writeResponse(wsi, body, headOnly: false, completeTransaction: false) < 0 ? -1 : 1
        }
        guard path == "/v1/ws" else {
            return refuse(.notFound("WebSockets connect at /v1/ws."))
        }
        guard !draining else {
            return refuse(.unavailable("This server is shutting down; connect again in a moment."))
        }
        let token = LWSTransport.bearerToken(wsi, query: LWSTransport.query(wsi))
        switch authenticator.check(token) {
        case .accepted(let identity):
            upgrades[UInt(bitPattern: wsi)] = identity
            return 0
        case .rejected:
            logger.info("refused websocket: bad token", metadata: ["peer": "\(LWSTransport.peer(wsi))"])
            return refuse(StaffcastError(.unauthorized, token == nil || token == ""
                ? "No token: send the header Authorization: Bearer TOKEN, or ?access_token=TOKEN."
                : "The token is not valid. Ask an organiser for a new one (staffcast admin token issue)."))
        case .unavailable:
            return refuse(.unavailable("The database is not reachable, so the token cannot be checked; try again shortly."))
        }
    }

    private func established(_ wsi: OpaquePointer, _ user: UnsafeMutableRawPointer?) -> Int32 {
        guard let identity = upgrades.removeValue(forKey: UInt(bitPattern: wsi)) else { return -1 }
        let id = makeID()
        user?.storeBytes(of: id, as: Int.self)
        let connection = Connection(id: id, wsi: wsi, identity: identity, peer: LWSTransport.peer(wsi),
                                    configuration: configuration, now: Self.monotonicNow())
        connections[id] = connection
        hub.connect(id, user: identity.userID)
        let now = Date()
        recentOpens[identity.userID, default: []].append(now)
        recentOpens[identity.userID] = recentOpens[identity.userID]!.filter { now.timeIntervalSince($0) < 3_600 }.suffix(100)
        stats.connectionsOpened += 1
        metrics.connectionsOpened.increment()
        logger.info("connection opened", metadata: ["conn": "\(id)", "user": "\(identity.userID)", "peer": "\(connection.peer)"])
        enqueue(connection, OutFrame(ServerFrame.hello(user: identity, serverTime: Date(), node: configuration.nodeID).encoded()))
        return 0
    }

    private func receive(_ wsi: OpaquePointer, _ user: UnsafeMutableRawPointer?, _ input: UnsafeMutableRawPointer?,
                         _ length: Int) -> Int32 {
        guard let connection = connections[Self.sessionID(user)] else { return -1 }
        connection.lastHeard = Self.monotonicNow()
        if connection.rx.count + length > Limits.maxFrameBytes {
            connection.rxOverflow = true
            connection.rx.removeAll(keepingCapacity: false)
        } else if !connection.rxOverflow, let input, length > 0 {
            connection.rx.append(contentsOf: UnsafeRawBufferPointer(start: input, count: length))
        }
        guard lws_is_final_fragment(wsi) != 0, lws_remaining_packet_payload(wsi) == 0 else { return 0 }
        let binary = lws_frame_is_binary(wsi) != 0
        let bytes = connection.rx
        let overflow = connection.rxOverflow
        connection.rx = []
        connection.rxOverflow = false
        if overflow {
            send(connection, .error(ref: nil, StaffcastError(.tooLarge,
                "The frame was larger than \(Limits.maxFrameBytes) bytes and was dropped; messages may be at most \(Limits.maxMessageBytes) bytes.")))
        } else if binary {
            send(connection, .error(ref: nil, .invalid("Send JSON in text frames; binary frames are not part of staffcast.v1.")))
        } else {
            handleFrame(connection, bytes)
        }
        return 0
    }

    private func writable(_ wsi: OpaquePointer, _ user: UnsafeMutableRawPointer?) -> Int32 {
        guard let connection = connections[Self.sessionID(user)] else { return -1 }
        if case .immediately(let code, let reason) = connection.closing {
            return close(wsi, code, reason)
        }
        if connection.pingDue {
            connection.pingDue = false
            connection.pingSentAt = Self.monotonicNow()
            let ping = OutFrame(Array("hb".utf8))
            if lws_write(wsi, ping.payload, ping.length, LWS_WRITE_PING) < ping.length { return -1 }
            if !connection.outbound.isEmpty { lws_callback_on_writable(wsi) }
            return 0
        }
        // Several frames per callback while the socket takes them (lws_send_pipe_choked says
        // when it would not), so a busy subscriber costs fewer wake-ups; at most 32 so one
        // connection cannot hog the service thread.
        var written = 0
        while written < 32, let frame = connection.outbound.popFirst() {
            if lws_write(wsi, frame.payload, frame.length, LWS_WRITE_TEXT) < frame.length { return -1 }
            written += 1
            if lws_send_pipe_choked(wsi) != 0 { break }
        }
        if written > 0 {
            connection.framesWritten += written
            stats.deliveries += written
            metrics.deliveries.increment(by: Int64(written))
        }
        if !connection.outbound.isEmpty {
            lws_callback_on_writable(wsi)
        } else if case .afterFlush(let code, let reason) = connection.closing, connection.inFlight == 0 {
            return close(wsi, code, reason)
        }
        return 0
    }

    private func close(_ wsi: OpaquePointer, _ code: UInt16, _ reason: String) -> Int32 {
        var bytes = Array(reason.utf8.prefix(120))
        lws_close_reason(wsi, lws_close_status(rawValue: UInt32(code)), &bytes, bytes.count)
        return -1
    }

    private func closed(_ user: UnsafeMutableRawPointer?) {
        let id = Self.sessionID(user)
        guard let connection = connections.removeValue(forKey: id) else { return }
        hub.disconnect(id)
        stats.connectionsClosed += 1
        var reason = "client closed"
        switch connection.closing {
        case .immediately(let code, let text)?, .afterFlush(let code, let text)?: reason = "\(code) \(text)"
        case nil: break
        }
        logger.info("connection closed", metadata: [
            "conn": "\(id)", "user": "\(connection.identity.userID)",
            "duration_s": "\(String(format: "%.1f", Date().timeIntervalSince(connection.openedAt)))",
            "reason": "\(reason)"])
        checkDrained()
    }

    /// Queues a frame for a connection and asks for a writable callback. A queue that is full
    /// means the client does not keep up: it is closed (4008) and catches up on reconnect.
    func enqueue(_ connection: Connection, _ frame: OutFrame) {
        if case .immediately? = connection.closing { return }
        // A non-empty queue already has a writable callback pending (the writable handler asks
        // again while frames remain), so only the first frame needs to ask: one lws call
        // (an epoll change) per burst instead of per frame.
        let wasEmpty = connection.outbound.isEmpty
        guard connection.outbound.push(frame, bytes: frame.length) else {
            connection.closing = .immediately(4008, "too slow: reconnect and catch up with since_seq")
            stats.slowClientsClosed += 1
            metrics.slowClientsClosed.increment()
            logger.warning("closing slow client", metadata: ["conn": "\(connection.id)", "queued": "\(connection.outbound.count)"])
            lws_callback_on_writable(connection.wsi)
            return
        }
        if wasEmpty { lws_callback_on_writable(connection.wsi) }
    }

    func enqueue(to id: Int, _ frame: OutFrame) {
        if let connection = connections[id] { enqueue(connection, frame) }
    }

    func send(_ connection: Connection, _ frame: ServerFrame) {
        enqueue(connection, OutFrame(frame.encoded()))
    }

    static func monotonicNow() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}
