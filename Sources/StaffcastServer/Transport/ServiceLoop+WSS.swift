import CLibWebSockets
import CStaffcastSocket
import Crypto
import Foundation
import StaffcastCore

/// WebSockets over TLS on a service loop, served on the TLS wsi that carried the upgrade
/// request (`TLSWebSocket`). Runs on the loop's thread only.
///
/// libwebsockets does the TLS (decrypted reads as `LWS_CALLBACK_RAW_RX`, `lws_write` with
/// `LWS_WRITE_RAW` for writes, keeping what the socket does not take); staffcast does the
/// WebSocket: the `101` answer (`WebSocketHandshake`), reading frames
/// (`WebSocketFrameReader`) and writing them. The engine sees the same events as for a ws
/// connection — received data, pongs, writable — and its write steps are carried out by the
/// same `write` (frames as they are, several in one write), so heartbeats, the write-stall
/// deadline (the socket's own kernel queue, `SIOCOUTQ`), 4401, 4008 and graceful close are the
/// same; a drop resets the TCP socket at once.
extension ServiceLoop {
    /// Seconds the peer has to answer our close frame before the socket is closed anyway.
    static let wssCloseGrace = 5.0

    /// An admitted upgrade on a TLS connection: its handshake fields are checked here
    /// (libwebsockets checks them for plain WebSockets; a bad one gets 400 with a sentence), the
    /// `101` goes out on the same wsi, which from now on is a WebSocket the engine knows; bytes
    /// that came after the request head are its first frames.
    func upgradeTLS(_ connection: HTTPConnection, _ wsi: OpaquePointer, _ head: HTTPRequestHead, admission: Gatekeeper.Admission) {
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
        tlsHTTP[UInt(bitPattern: wsi)] = nil
        let answer = WebSocketHandshake.response(accepted) { Array(Insecure.SHA1.hash(data: $0)) }
        guard writeRaw(wsi, answer) else {
            gatekeeper.release(admission)
            sc_set_linger_zero(connection.fd)
            lws_set_timeout(wsi, PENDING_TIMEOUT_USER_OK, staffcast_lws_kill_async())
            return
        }
        if readPaused { lws_rx_flow_control(wsi, 1) }
        let socket = TLSWebSocket(wsi: wsi, id: newConnectionID())
        wss[UInt(bitPattern: wsi)] = socket
        opened(socket.id, wsi, admission, peer: connection.peer)
        if !rest.isEmpty {
            _ = rest.withUnsafeBytes { wssRead(socket, $0) }
        }
    }

    /// Decrypted bytes of a wss connection.
    func wssReceived(_ socket: TLSWebSocket, _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
        guard let input, length > 0 else { return 0 }
        return wssRead(socket, UnsafeRawBufferPointer(start: input, count: length))
    }

    func wssRead(_ socket: TLSWebSocket, _ bytes: UnsafeRawBufferPointer) -> Int32 {
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

    /// A wss connection can take bytes: a pong first, then a pending close, else what the
    /// engine has; a finished connection is closed once libwebsockets holds nothing of it.
    func wssWritable(_ socket: TLSWebSocket) -> Int32 {
        let wsi = socket.wsi
        guard !socket.ended else { return 0 }
        if lws_partial_buffered(wsi) != 0 {
            lws_callback_on_writable(wsi)
            return 0
        }
        if let pong = socket.pong {
            socket.pong = nil
            if !writeRaw(wsi, pong) { return wssEnd(socket, reset: true) }
            if lws_partial_buffered(wsi) != 0 {
                lws_callback_on_writable(wsi)
                return 0
            }
        }
        if let close = socket.closeFrame {
            socket.closeFrame = nil
            socket.closeSentAt = Self.monotonicNow()
            if !writeRaw(wsi, close) { return wssEnd(socket, reset: true) }
        }
        if socket.isClosing {
            if socket.endWhenFlushed {
                if lws_partial_buffered(wsi) != 0 { lws_callback_on_writable(wsi) } else { return wssEnd(socket, reset: false) }
            }
            return 0
        }
        let result = write(engine.writable(socket.id, now: Self.monotonicNow()), socket.id, wsi, wss: socket)
        return result < 0 ? wssEnd(socket, reset: true) : 0
    }

    /// The engine closes a wss connection: the close frame goes out, then the peer has
    /// `wssCloseGrace` to answer it (`wssTick`).
    func wssClose(_ socket: TLSWebSocket, code: UInt16, reason: String) -> Int32 {
        guard socket.closeSentAt == nil else { return 0 }
        socket.closeFrame = WebSocketControlFrame.close(code: code, reason: reason)
        lws_callback_on_writable(socket.wsi)
        return 0
    }

    /// Closes the socket (libwebsockets sends close_notify and closes it; with `reset`, a TCP
    /// reset instead). `LWS_CALLBACK_RAW_CLOSE` then forgets the connection (`wssClosed`).
    func wssEnd(_ socket: TLSWebSocket, reset: Bool) -> Int32 {
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
    func wssTick(now: Double) {
        for socket in wss.values where !socket.ended {
            if let sent = socket.closeSentAt, now - sent >= Self.wssCloseGrace { _ = wssEnd(socket, reset: false) }
        }
    }

    /// libwebsockets closed a wss wsi (either side, a drop, the context's end).
    func wssClosed(_ wsi: OpaquePointer) {
        guard let socket = wss.removeValue(forKey: UInt(bitPattern: wsi)) else { return }
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
