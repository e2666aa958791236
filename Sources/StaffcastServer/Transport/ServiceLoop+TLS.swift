import CLibWebSockets
import CStaffcastSocket
import Foundation

/// TLS on a service loop (`TLSRelay` explains the design): accepting a connection when the
/// port speaks TLS, and relaying bytes between libwebsockets' TLS socket and the local socket
/// pair whose other end the plain-HTTP front serves. Runs on the loop's thread only.
extension ServiceLoop {
    /// Seconds a relay side may take to write out what it holds once the other side closed.
    static let relayCloseGrace: Int32 = 10

    /// An accepted TCP connection on a TLS port: the TLS socket to libwebsockets, the pair's
    /// inner end to the HTTP front (with the TCP peer's address).
    func acceptTLS(_ fd: Int32, peer: String) {
        guard let lws else { _ = sc_close(fd); return }
        var inner: Int32 = -1
        var outer: Int32 = -1
        let rc = sc_socketpair(&inner, &outer)
        guard rc == 0 else {
            _ = sc_close(fd)
            logger.warning("TLS connection refused", metadata: ["error": "\(SocketError(operation: "socketpair", code: -rc))"])
            return
        }
        let tlsSide: OpaquePointer
        do {
            tlsSide = try lws.adoptRaw(fd, tls: true)
        } catch {
            // A failed handshake start (libwebsockets closed fd).
            _ = sc_close(inner)
            _ = sc_close(outer)
            return
        }
        let plainSide: OpaquePointer
        do {
            plainSide = try lws.adoptRaw(outer, tls: false)
        } catch {
            _ = sc_close(inner)
            lws_set_timeout(tlsSide, PENDING_TIMEOUT_USER_OK, staffcast_lws_kill_async())
            return
        }
        let relay = TLSRelay(tls: tlsSide, plain: plainSide)
        relays[UInt(bitPattern: tlsSide)] = relay
        relays[UInt(bitPattern: plainSide)] = relay
        relayPeers[inner] = peer
        if let stale = adopted.removeValue(forKey: inner) { gatekeeper.release(stale.admission) }
        let connection = HTTPConnection(fd: inner, serial: nextSerial, peer: peer, now: Self.monotonicNow())
        nextSerial += 1
        do {
            try poller?.add(inner)
            http[inner] = connection
        } catch {
            _ = sc_close(inner) // the relay's plain side sees the end of stream and closes both
        }
    }

    /// Bytes read on one side of a relay (decrypted, for the TLS side): written to the other.
    func relayReceived(_ wsi: OpaquePointer, _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
        guard let relay = relays[UInt(bitPattern: wsi)] else { return -1 }
        guard !relay.closing, let other = relay.partner(of: wsi) else { return 0 }
        if !relay.establishTimeoutCleared, wsi == relay.tls {
            relay.establishTimeoutCleared = true
            lws_set_timeout(wsi, NO_PENDING_TIMEOUT, 0)
        }
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
        guard let survivor = relay.gone(wsi) else { return }
        lws_set_timeout(survivor, PENDING_TIMEOUT_USER_OK, Self.relayCloseGrace)
        lws_callback_on_writable(survivor)
    }

    static let relayChunk = 16_384
}
