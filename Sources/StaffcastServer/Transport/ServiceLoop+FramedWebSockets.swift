import CLibWebSockets
import CStaffcastSocket
import Crypto
import Foundation
import StaffcastCore

/// The WebSockets of a service loop, ws and wss alike (`FramedWebSocket`): a plain socket stays
/// on the loop's epoll set where the HTTP front accepted it (`ServiceLoop+PlainSockets`), a TLS
/// one on the libwebsockets wsi that carried the upgrade request. Runs on the loop's thread
/// only.
///
/// staffcast does the WebSocket: the `101` answer (`WebSocketHandshake`), reading frames
/// (`WebSocketFrameReader`) and writing them; libwebsockets only does TLS. Why not
/// libwebsockets' own WebSockets: the HTTP front has already read and checked the upgrade
/// request, which libwebsockets would parse again, and its `101` would be a write of its own
/// before `hello`; here both leave in one write (a third of a reconnect storm's sends). The
/// engine's write steps are carried out by `write` (frames as they are, several in one write),
/// so heartbeats, the write-stall deadline (the socket's own kernel queue, `SIOCOUTQ`), 4401,
/// 4008 and graceful close are the same on both; a drop resets the TCP socket (at the end of
/// the turn for a plain one).
extension ServiceLoop {
    /// Seconds the peer has to answer our close frame before the socket is closed anyway.
    static let closeGrace = 5.0

    /// An admitted upgrade: its handshake fields and a subscribe in its URL are checked here (a
    /// bad one gets 400 with a sentence), and from now on the connection is a WebSocket the engine knows, on the same
    /// socket (or TLS wsi); the `101` goes out in front of `hello`, and bytes that came after
    /// the request head are its first frames.
    func upgrade(_ connection: HTTPConnection, _ head: HTTPRequestHead, admission: Gatekeeper.Admission) {
        // The handshake's fields, and a subscribe in the URL: either wrong is a 400 instead of
        // the upgrade (checked once the caller is admitted, so one without a token learns that first).
        let accepted: WebSocketHandshake.Accepted
        let subscribe: URLSubscribe?
        do throws(StaffcastError) {
            accepted = try WebSocketHandshake.check(head, subprotocol: LWSContext.subprotocol).get()
            subscribe = try URLSubscribe.parse(head.query).get()
        } catch {
            gatekeeper.release(admission)
            logRefusedUpgrade(connection, error)
            return perform(connection.machine.upgradeRefused(error), on: connection)
        }
        let rest = connection.machine.handOver()
        http[connection.fd] = nil
        let answer = WebSocketHandshake.response(accepted) { Array(Insecure.SHA1.hash(data: $0)) }
        let socket: FramedWebSocket
        if let tls = connection.tls {
            tlsHTTP[UInt(bitPattern: tls)] = nil
            socket = FramedWebSocket(carrier: .tls(tls), id: newConnectionID(), admission: admission, handshakeAnswer: answer)
            framed[UInt(bitPattern: tls)] = socket
            if connection.readPaused { lws_rx_flow_control(tls, 1) }
        } else {
            // It stays in the epoll set, read again (the HTTP front may have paused it) and
            // watched for writability only when the kernel leaves bytes unsent.
            socket = FramedWebSocket(carrier: .plain(connection.fd), id: newConnectionID(), admission: admission, handshakeAnswer: answer)
            plainFramed[connection.fd] = socket
            if !connection.readInterest || connection.writeInterest {
                poller?.modify(connection.fd, readable: true, writable: false)
            }
        }
        // The engine asks for the first write (the 101 goes in front of it): `hello` at once, or,
        // with a subscribe in the URL, `hello` and that subscribe's answer together.
        opened(socket, peer: connection.peer, subscribe: subscribe)
        if !rest.isEmpty {
            _ = rest.withUnsafeBytes { framedRead(socket, $0) }
        }
    }

    /// Bytes of a WebSocket (decrypted, over TLS).
    func framedReceived(_ socket: FramedWebSocket, _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
        guard let input, length > 0 else { return 0 }
        return framedRead(socket, UnsafeRawBufferPointer(start: input, count: length))
    }

    func framedRead(_ socket: FramedWebSocket, _ bytes: UnsafeRawBufferPointer) -> Int32 {
        guard !socket.ended else { return 0 }
        let now = Self.monotonicNow()
        for event in socket.reader.read(bytes) {
            switch event {
            case .data(let payload, let final, let binary):
                // After our close, the peer's data is read (it may still be sending) and ignored.
                if socket.isClosing { continue }
                frameReceivedAt = MessageTracer.now()
                payload.withUnsafeBytes { perform(engine.received(socket.id, $0, final: final, binary: binary, now: now)) }
            case .ping(let payload):
                if socket.isClosing { continue }
                socket.pong = WebSocketControlFrame.pong(payload)
                askWritable(socket)
            case .pong:
                engine.pongReceived(socket.id, now: now)
                if let rtt = engine.connection(socket.id)?.lastRTT { metrics.heartbeatRTT.recordSeconds(rtt) }
            case .close(let code, _):
                if socket.closeSentAt != nil {
                    // The answer to our close: the handshake is complete.
                    socket.endWhenFlushed = true
                } else if socket.closeFrame == nil {
                    socket.closeFrame = WebSocketControlFrame.closeReply(code: code)
                    socket.endWhenFlushed = true
                }
                askWritable(socket)
            case .failure(let code, let reason):
                logger.info("websocket closed: broken framing", metadata: ["conn": LogValue.number(socket.id),
                                                                          "code": LogValue.number(Int(code)), "reason": "\(reason)"])
                if socket.closeSentAt == nil {
                    socket.closeFrame = WebSocketControlFrame.close(code: code, reason: reason)
                }
                socket.endWhenFlushed = true
                askWritable(socket)
            }
        }
        return 0
    }

    /// A WebSocket can take bytes: the `101` first (with the engine's first frames when they
    /// fit), a pong, then a pending close, else what the engine has; a finished connection is
    /// closed once nothing of it is held (by us for plain sockets, by libwebsockets for TLS).
    func framedWritable(_ socket: FramedWebSocket) -> Int32 {
        guard !socket.ended else { return 0 }
        if holdsOutput(socket) {
            askWritable(socket)
            return 0
        }
        if let answer = socket.handshakeAnswer, socket.pong != nil || socket.isClosing {
            socket.handshakeAnswer = nil
            if !send(socket, answer) { return framedEnd(socket, reset: true) }
        }
        if let pong = socket.pong {
            socket.pong = nil
            if !send(socket, pong) { return framedEnd(socket, reset: true) }
            if holdsOutput(socket) {
                askWritable(socket)
                return 0
            }
        }
        if let close = socket.closeFrame {
            socket.closeFrame = nil
            socket.closeSentAt = Self.monotonicNow()
            if !send(socket, close) { return framedEnd(socket, reset: true) }
        }
        if socket.isClosing {
            if socket.endWhenFlushed {
                if holdsOutput(socket) { askWritable(socket) } else { return framedEnd(socket, reset: false) }
            }
            return 0
        }
        let result = write(engine.writable(socket.id, now: Self.monotonicNow()), socket)
        return result < 0 ? framedEnd(socket, reset: true) : 0
    }

    /// The engine closes a WebSocket: the close frame goes out, then the peer has
    /// `closeGrace` to answer it (`framedTick`).
    func framedClose(_ socket: FramedWebSocket, code: UInt16, reason: String) -> Int32 {
        guard socket.closeSentAt == nil else { return 0 }
        socket.closeFrame = WebSocketControlFrame.close(code: code, reason: reason)
        askWritable(socket)
        return 0
    }

    /// Closes the socket: a plain one at the end of this turn (`plainEnd`); a TLS one by
    /// libwebsockets (close_notify; `LWS_CALLBACK_RAW_CLOSE` then forgets it, `framedClosed`).
    /// With `reset`, a TCP reset instead.
    func framedEnd(_ socket: FramedWebSocket, reset: Bool) -> Int32 {
        guard !socket.ended else {
            // Ended gracefully earlier in this turn (a close answer's grace ran out) and now
            // dropped (its write stalled): the close still to come resets.
            if reset, isOpen(socket) {
                let fd = descriptor(socket)
                if fd >= 0 { sc_set_linger_zero(fd) }
            }
            return 0
        }
        guard case .tls(let wsi) = socket.carrier else {
            plainEnd(socket, reset: reset)
            return 0
        }
        socket.ended = true
        if reset {
            let fd = lws_get_socket_fd(wsi)
            if fd >= 0 { sc_set_linger_zero(fd) }
        }
        lws_set_timeout(wsi, PENDING_TIMEOUT_USER_OK, staffcast_lws_kill_async())
        return 0
    }

    /// Once a tick: a peer that did not answer our close in time is closed.
    func framedTick(now: Double) {
        for socket in sockets.values where !socket.ended {
            if let sent = socket.closeSentAt, now - sent >= Self.closeGrace { _ = framedEnd(socket, reset: false) }
        }
    }

    /// libwebsockets closed a TLS WebSocket's wsi (either side, a drop, the context's end).
    func framedClosed(_ wsi: OpaquePointer) {
        guard let socket = framed.removeValue(forKey: UInt(bitPattern: wsi)) else { return }
        socket.ended = true
        forget(socket.id)
    }

    /// Writes a small control frame or the `101` as it is. TLS: copied after the LWS_PRE
    /// headroom libwebsockets may use; what the socket does not take now, it keeps and sends
    /// first.
    func send(_ socket: FramedWebSocket, _ bytes: [UInt8]) -> Bool {
        guard case .tls(let wsi) = socket.carrier else {
            return bytes.withUnsafeBufferPointer { send(socket, $0.baseAddress!, $0.count) }
        }
        precondition(bytes.count <= Self.tlsChunk, "control writes are small")
        let pre = staffcast_lws_pre()
        bytes.withUnsafeBufferPointer { (tlsBuffer + pre).update(from: $0.baseAddress!, count: $0.count) }
        return lws_write(wsi, tlsBuffer + pre, bytes.count, staffcast_lws_write_raw()) >= bytes.count
    }
}
