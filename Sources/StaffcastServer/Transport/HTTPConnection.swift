import Foundation
import StaffcastCore

/// One TCP connection while it speaks HTTP (until a WebSocket upgrade makes it a
/// `FramedWebSocket`): a socket the loop reads and writes itself, or, on a TLS port, a
/// libwebsockets TLS wsi whose decrypted bytes the loop is given (`tls`, `ServiceLoop+TLS`).
/// Owned by its service loop; only that loop's thread touches it.
///
/// Only what the transport needs lives here (the descriptor, the wsi, poll interest); the
/// HTTP rules (pipelining, keep-alive, deadlines, the upgrade checks) are `machine`'s, which
/// `ServiceLoop+HTTPFront` feeds and whose actions it carries out.
final class HTTPConnection {
    let fd: Int32
    /// The libwebsockets wsi doing TLS on `fd` (which libwebsockets then owns), or nil.
    let tls: OpaquePointer?
    /// TLS only: decrypted bytes have arrived (the handshake is done).
    var tlsEstablished = false
    /// Distinguishes this connection from a later one that reuses its descriptor.
    let serial: Int
    let peer: String
    var machine: HTTPConnectionMachine
    /// Plain sockets: whether the epoll set watches it for writability, and for input (not
    /// while the machine pauses reading).
    var writeInterest = false
    var readInterest = true

    init(fd: Int32, serial: Int, peer: String, limits: HTTPConnectionLimits, now: Double, tls: OpaquePointer? = nil) {
        self.fd = fd
        self.tls = tls
        self.serial = serial
        self.peer = peer
        machine = HTTPConnectionMachine(limits: limits, now: now)
    }

    /// Bytes read and not framed yet (an admitted upgrade's request among them).
    var input: [UInt8] { machine.input }
    /// Reading is paused until answers go out.
    var readPaused: Bool { machine.isReadPaused }
}
