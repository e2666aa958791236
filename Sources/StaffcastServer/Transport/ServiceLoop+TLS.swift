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
/// An admitted WebSocket upgrade stays on that wsi too, framed by staffcast as every WebSocket
/// is (`ServiceLoop+FramedWebSockets`).
extension ServiceLoop {
    /// Bytes handed to `lws_write` at a time (one TLS record's worth).
    static let tlsChunk = 16_384

    /// An accepted TCP connection on a TLS port: to libwebsockets for the handshake, and to
    /// the HTTP front at once (its deadlines run from now).
    func acceptTLS(_ fd: Int32, peer: String) {
        guard let lws else { _ = sc_close(fd); return }
        let wsi: OpaquePointer
        do {
            wsi = try lws.adoptTLS(fd)
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
            let n = min(connection.machine.output.count, Self.tlsChunk)
            connection.machine.output.withUnsafeBufferPointer { (tlsBuffer + pre).update(from: $0.baseAddress!, count: n) }
            if lws_write(wsi, tlsBuffer + pre, n, staffcast_lws_write_raw()) < n {
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
}
