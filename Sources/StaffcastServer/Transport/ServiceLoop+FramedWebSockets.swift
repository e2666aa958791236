import CLibWebSockets
import CStaffcastSocket
import Crypto
import Foundation
import StaffcastCore

/// The WebSockets of a service loop, ws and wss alike, served on a raw libwebsockets wsi
/// (`FramedWebSocket`): the plain socket the HTTP front hands over at the upgrade, or the TLS
/// wsi that carried the upgrade request. Runs on the loop's thread only.
///
/// libwebsockets moves the bytes (and does the TLS: decrypted reads as `LWS_CALLBACK_RAW_RX`,
/// `lws_write` with `LWS_WRITE_RAW` for writes, keeping what the socket does not take);
/// staffcast does the WebSocket: the `101` answer (`WebSocketHandshake`), reading frames
/// (`WebSocketFrameReader`) and writing them. Why not libwebsockets' own WebSockets for plain
/// connections: the HTTP front has already read and checked the upgrade request, which
/// libwebsockets would parse again, and its `101` would be a write of its own before `hello`;
/// here both leave in one write (a third of a reconnect storm's sends). The engine's write
/// steps are carried out by `write` (frames as they are, several in one write), so
/// heartbeats, the write-stall deadline (the socket's own kernel queue, `SIOCOUTQ`), 4401,
/// 4008 and graceful close are the same on both; a drop resets the TCP socket at once.
extension ServiceLoop {
    /// Seconds the peer has to answer our close frame before the socket is closed anyway.
    static let closeGrace = 5.0

    /// An admitted upgrade: its handshake fields are checked here (a bad one gets 400 with a
    /// sentence), a plain socket goes from the HTTP front's epoll set to libwebsockets as a raw
    /// socket (a TLS one is already there), and from now on it is a WebSocket the engine knows;
    /// the `101` goes out in front of `hello`, and bytes that came after the request head are
    /// its first frames.
    func upgrade(_ connection: HTTPConnection, _ head: HTTPRequestHead, admission: Gatekeeper.Admission) {
        let accepted: WebSocketHandshake.Accepted
        switch WebSocketHandshake.check(head, subprotocol: LWSContext.subprotocol) {
        case .failure(let error):
            gatekeeper.release(admission)
            logRefusedUpgrade(connection, error)
            return perform(connection.machine.upgradeRefused(error), on: connection)
        case .success(let fields):
            accepted = fields
        }
        let readPaused = connection.readPaused
        let bytes = connection.machine.handOver()
        var rest: [UInt8] = []
        if case .upgrade(_, let headLength) = HTTPRequestParser().parse(bytes), bytes.count > headLength { rest = Array(bytes[headLength...]) }
        http[connection.fd] = nil
        let wsi: OpaquePointer
        if let tls = connection.tls {
            tlsHTTP[UInt(bitPattern: tls)] = nil
            wsi = tls
        } else {
            poller?.remove(connection.fd)
            do throws(SocketError) {
                guard let lws else {
                    _ = sc_close(connection.fd) // nobody else will
                    throw SocketError(operation: "the loop is stopping", code: 0)
                }
                wsi = try lws.adoptRaw(connection.fd)
            } catch {
                gatekeeper.release(admission)
                logger.warning("websocket not started", metadata: ["peer": "\(connection.peer)", "error": "\(error)"])
                return
            }
        }
        if readPaused { lws_rx_flow_control(wsi, 1) }
        let answer = WebSocketHandshake.response(accepted) { Array(Insecure.SHA1.hash(data: $0)) }
        let socket = FramedWebSocket(wsi: wsi, id: newConnectionID(), handshakeAnswer: answer)
        framed[UInt(bitPattern: wsi)] = socket
        opened(socket.id, wsi, admission, peer: connection.peer)
        lws_callback_on_writable(wsi) // the 101, even if the engine had nothing to say yet
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
                lws_callback_on_writable(socket.wsi)
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
                lws_callback_on_writable(socket.wsi)
            case .failure(let code, let reason):
                logger.info("websocket closed: broken framing", metadata: ["conn": LogValue.number(socket.id),
                                                                          "code": LogValue.number(Int(code)), "reason": "\(reason)"])
                if socket.closeSentAt == nil {
                    socket.closeFrame = WebSocketControlFrame.close(code: code, reason: reason)
                }
                socket.endWhenFlushed = true
                lws_callback_on_writable(socket.wsi)
            }
        }
        return 0
    }

    /// A WebSocket can take bytes: the `101` first (with the engine's first frames when they
    /// fit), a pong, then a pending close, else what the engine has; a finished connection is
    /// closed once libwebsockets holds nothing of it.
    func framedWritable(_ socket: FramedWebSocket) -> Int32 {
        let wsi = socket.wsi
        guard !socket.ended else { return 0 }
        if lws_partial_buffered(wsi) != 0 {
            lws_callback_on_writable(wsi)
            return 0
        }
        if let answer = socket.handshakeAnswer, socket.pong != nil || socket.isClosing {
            socket.handshakeAnswer = nil
            if !writeRaw(wsi, answer) { return framedEnd(socket, reset: true) }
        }
        if let pong = socket.pong {
            socket.pong = nil
            if !writeRaw(wsi, pong) { return framedEnd(socket, reset: true) }
            if lws_partial_buffered(wsi) != 0 {
                lws_callback_on_writable(wsi)
                return 0
            }
        }
        if let close = socket.closeFrame {
            socket.closeFrame = nil
            socket.closeSentAt = Self.monotonicNow()
            if !writeRaw(wsi, close) { return framedEnd(socket, reset: true) }
        }
        if socket.isClosing {
            if socket.endWhenFlushed {
                if lws_partial_buffered(wsi) != 0 { lws_callback_on_writable(wsi) } else { return framedEnd(socket, reset: false) }
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
        lws_callback_on_writable(socket.wsi)
        return 0
    }

    /// Closes the socket (libwebsockets sends close_notify and closes it; with `reset`, a TCP
    /// reset instead). `LWS_CALLBACK_RAW_CLOSE` then forgets the connection (`framedClosed`).
    func framedEnd(_ socket: FramedWebSocket, reset: Bool) -> Int32 {
        guard !socket.ended else { return 0 }
        socket.ended = true
        if reset {
            let fd = lws_get_socket_fd(socket.wsi)
            if fd >= 0 { sc_set_linger_zero(fd) }
        }
        lws_set_timeout(socket.wsi, PENDING_TIMEOUT_USER_OK, staffcast_lws_kill_async())
        return 0
    }

    /// Once a tick: a peer that did not answer our close in time is closed.
    func framedTick(now: Double) {
        for socket in framed.values where !socket.ended {
            if let sent = socket.closeSentAt, now - sent >= Self.closeGrace { _ = framedEnd(socket, reset: false) }
        }
    }

    /// libwebsockets closed a WebSocket's wsi (either side, a drop, the context's end).
    func framedClosed(_ wsi: OpaquePointer) {
        guard let socket = framed.removeValue(forKey: UInt(bitPattern: wsi)) else { return }
        socket.ended = true
        forget(socket.id)
    }

    /// Writes bytes through libwebsockets as they are (copied after the LWS_PRE headroom it
    /// may use); what the socket does not take now, it keeps and sends first.
    func writeRaw(_ wsi: OpaquePointer, _ bytes: [UInt8]) -> Bool {
        precondition(bytes.count <= Self.tlsChunk, "control writes are small")
        let pre = staffcast_lws_pre()
        bytes.withUnsafeBufferPointer { (tlsBuffer + pre).update(from: $0.baseAddress!, count: $0.count) }
        return lws_write(wsi, tlsBuffer + pre, bytes.count, staffcast_lws_write_raw()) >= bytes.count
    }
}
