import CLibWebSockets
import CStaffcastSocket
import Foundation

/// TLS on a service loop, when `tls_cert`/`tls_key` are set. Runs on the loop's thread only.
///
/// libwebsockets does the TLS: an accepted socket is adopted as a raw socket on the vhost
/// that holds the certificate, and from the first byte it is an `HTTPConnection` of the
/// loop's HTTP front, like a plain one, except that its bytes come from libwebsockets'
/// decrypted reads (`LWS_CALLBACK_RAW_RX`) and go out through `lws_write` on the same wsi.
/// So the handshake is under the HTTP front's `header_timeout` (a half-open handshake is
/// closed and its OpenSSL state freed), and an answer is written whole before a
/// `Connection: close` closes the socket.
///
/// An admitted WebSocket upgrade cannot become a libwebsockets WebSocket on that wsi (lws has
/// no public way to change a raw socket's role, nor to take over a TLS session), so only then
/// a local socket pair joins the TLS socket to a libwebsockets WebSocket (`TLSRelay`).
extension ServiceLoop {
    /// Seconds a relay side may take to write out what it holds once the other side closed.
    static let relayCloseGrace: Int32 = 10
    /// Bytes handed to `lws_write` at a time (one TLS record's worth).
    static let relayChunk = 16_384

    /// An accepted TCP connection on a TLS port: to libwebsockets for the handshake, and to
    /// the HTTP front at once (its deadlines run from now).
    func acceptTLS(_ fd: Int32, peer: String) {
        guard let lws else { _ = sc_close(fd); return }
        let wsi: OpaquePointer
        do {
            wsi = try lws.adoptRaw(fd, tls: true)
        } catch {
            return // libwebsockets closed fd
        }
        if let stale = http.removeValue(forKey: fd), let old = stale.tls { tlsHTTP[UInt(bitPattern: old)] = nil }
        let connection = HTTPConnection(fd: fd, serial: nextSerial, peer: peer, limits: httpLimits, now: Self.monotonicNow(), tls: wsi)
        nextSerial += 1
        http[fd] = connection
        tlsHTTP[UInt(bitPattern: wsi)] = connection
    }

    /// Decrypted bytes of a TLS connection that speaks HTTP.
    func tlsReceived(_ connection: HTTPConnection, _ wsi: OpaquePointer, _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
        if !connection.tlsEstablished {
            // libwebsockets armed a 10 s "establish" timeout when the handshake completed, which
            // only its own HTTP role clears; from here the HTTP front's deadlines govern.
            connection.tlsEstablished = true
            lws_set_timeout(wsi, NO_PENDING_TIMEOUT, 0)
        }
        guard let input, length > 0 else { return 0 }
        // Past its buffer limit the machine asks to stop reading (`lws_rx_flow_control`) until
        // answers go out.
        perform(connection.machine.received(UnsafeRawBufferPointer(start: input, count: length), now: Self.monotonicNow()),
                on: connection)
        return 0
    }

    /// Writes what is ready through TLS, one record at a time while libwebsockets holds
    /// nothing back; closes the connection once the last byte has gone to the kernel.
    func flushTLS(_ connection: HTTPConnection, _ wsi: OpaquePointer) {
        let pre = staffcast_lws_pre()
        while !connection.machine.output.isEmpty, lws_partial_buffered(wsi) == 0 {
            let n = min(connection.machine.output.count, Self.relayChunk)
            connection.machine.output.withUnsafeBufferPointer { (relayBuffer + pre).update(from: $0.baseAddress!, count: n) }
            if lws_write(wsi, relayBuffer + pre, n, staffcast_lws_write_raw()) < n {
                close(connection, reset: true)
                return
            }
            connection.machine.wrote(n, now: Self.monotonicNow())
        }
        let held = !connection.machine.output.isEmpty || lws_partial_buffered(wsi) != 0
        // libwebsockets keeps what the socket did not take and calls back once it is sent.
        if held { lws_callback_on_writable(wsi) }
        perform(connection.machine.flushed(held: held, now: Self.monotonicNow()), on: connection)
    }

    /// Closes a TLS connection that speaks HTTP (libwebsockets sends close_notify and closes
    /// the socket; with `reset`, SO_LINGER 0 makes that a TCP reset).
    func closeTLS(_ connection: HTTPConnection, _ wsi: OpaquePointer, reset: Bool) {
        http[connection.fd] = nil
        tlsHTTP[UInt(bitPattern: wsi)] = nil
        if reset { sc_set_linger_zero(connection.fd) }
        lws_set_timeout(wsi, PENDING_TIMEOUT_USER_OK, staffcast_lws_kill_async())
    }

    /// libwebsockets closed a TLS wsi (the peer left, a handshake failed or timed out).
    func tlsClosed(_ wsi: OpaquePointer) {
        guard let connection = tlsHTTP.removeValue(forKey: UInt(bitPattern: wsi)) else { return }
        if http[connection.fd] === connection { http[connection.fd] = nil }
    }

    /// Whether libwebsockets holds bytes of this TLS connection it could not send yet.
    func tlsHoldsOutput(_ connection: HTTPConnection) -> Bool {
        guard let wsi = connection.tls else { return false }
        return lws_partial_buffered(wsi) != 0
    }

    /// An admitted upgrade over TLS: a local socket pair, whose inner end becomes a
    /// libwebsockets WebSocket (with the request bytes read so far) and whose outer end is
    /// relayed to and from the TLS socket.
    func upgradeTLS(_ connection: HTTPConnection, _ tls: OpaquePointer, admission: Gatekeeper.Admission) {
        let bytes = connection.input
        http[connection.fd] = nil
        tlsHTTP[UInt(bitPattern: tls)] = nil
        if connection.readPaused { lws_rx_flow_control(tls, 1) }
        var inner: Int32 = -1
        var outer: Int32 = -1
        let rc = sc_socketpair(&inner, &outer)
        guard rc == 0, let lws else {
            gatekeeper.release(admission)
            logger.warning("websocket over TLS refused", metadata: ["error": "\(SocketError(operation: "socketpair", code: -rc))"])
            if rc == 0 { _ = sc_close(inner); _ = sc_close(outer) }
            sc_set_linger_zero(connection.fd)
            lws_set_timeout(tls, PENDING_TIMEOUT_USER_OK, staffcast_lws_kill_async())
            return
        }
        let plain: OpaquePointer
        do {
            plain = try lws.adoptRaw(outer, tls: false)
        } catch {
            gatekeeper.release(admission)
            _ = sc_close(inner)
            lws_set_timeout(tls, PENDING_TIMEOUT_USER_OK, staffcast_lws_kill_async())
            return
        }
        let relay = TLSRelay(tls: tls, plain: plain, inner: inner, tcp: connection.fd, peer: connection.peer)
        relays[UInt(bitPattern: tls)] = relay
        relays[UInt(bitPattern: plain)] = relay
        relaysByInner[inner] = relay
        if let stale = adopted.removeValue(forKey: inner) { gatekeeper.release(stale.admission) }
        adopted[inner] = (admission, Self.monotonicNow())
        do {
            try lws.adopt(inner, alreadyRead: bytes)
        } catch {
            // libwebsockets closed inner: the relay's plain side sees the end and closes both.
            if let entry = adopted.removeValue(forKey: inner) { gatekeeper.release(entry.admission) }
            logger.warning("websocket handshake not started", metadata: ["error": "\(error)"])
        }
    }

    /// What a relayed WebSocket's bytes wait in beyond its own socket: the TCP socket's send
    /// queue and whatever libwebsockets holds for it, so the write-stall deadline sees a
    /// peer that stopped reading as soon as the TCP side stops moving.
    func relayQueued(_ inner: Int32) -> Int {
        guard let relay = relaysByInner[inner], !relay.tlsGone else { return 0 }
        return Int(max(0, sc_send_queue(relay.tcp))) + (lws_partial_buffered(relay.tls) != 0 ? 1 : 0)
    }

    /// A relayed WebSocket is dropped: its TCP socket is reset at once (its buffers freed),
    /// rather than flushed to a peer that does not read.
    func resetRelay(_ relay: TLSRelay) {
        if relaysByInner[relay.inner] === relay { relaysByInner[relay.inner] = nil }
        relay.closing = true
        if !relay.tlsGone {
            sc_set_linger_zero(relay.tcp)
            lws_set_timeout(relay.tls, PENDING_TIMEOUT_USER_OK, staffcast_lws_kill_async())
        }
        if !relay.plainGone { lws_set_timeout(relay.plain, PENDING_TIMEOUT_USER_OK, staffcast_lws_kill_async()) }
    }

    /// Bytes read on one side of a relay (decrypted, for the TLS side): written to the other.
    func relayReceived(_ wsi: OpaquePointer, _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
        guard let relay = relays[UInt(bitPattern: wsi)] else { return -1 }
        guard !relay.closing, let other = relay.partner(of: wsi) else { return 0 }
        guard let input, length > 0 else { return 0 }
        let pre = staffcast_lws_pre()
        var offset = 0
        while offset < length {
            let n = min(length - offset, Self.relayChunk)
            (relayBuffer + pre).update(from: (input + offset).assumingMemoryBound(to: UInt8.self), count: n)
            if lws_write(other, relayBuffer + pre, n, staffcast_lws_write_raw()) < n { return -1 }
            offset += n
        }
        if lws_partial_buffered(other) != 0 {
            // The other side holds bytes it could not send yet: stop reading here until it
            // has written them (its writable callback lets this side read again).
            lws_rx_flow_control(wsi, 0)
            lws_callback_on_writable(other)
        }
        return 0
    }

    /// A relay side wrote out everything it held.
    func relayWritable(_ wsi: OpaquePointer) -> Int32 {
        guard let relay = relays[UInt(bitPattern: wsi)] else { return -1 }
        if relay.closing { return -1 } // the other side has gone and this one is flushed
        if let other = relay.partner(of: wsi) { lws_rx_flow_control(other, 1) }
        return 0
    }

    /// A relay side closed (or was destroyed): the other is flushed, then closed.
    func relayClosed(_ wsi: OpaquePointer) {
        guard let relay = relays.removeValue(forKey: UInt(bitPattern: wsi)) else { return }
        if relaysByInner[relay.inner] === relay { relaysByInner[relay.inner] = nil }
        guard let survivor = relay.gone(wsi) else { return }
        lws_set_timeout(survivor, PENDING_TIMEOUT_USER_OK, Self.relayCloseGrace)
        lws_callback_on_writable(survivor)
    }
}
