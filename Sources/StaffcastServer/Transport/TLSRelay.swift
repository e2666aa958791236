/// One WebSocket over TLS on a service loop: the TLS socket (`tls`, adopted by libwebsockets
/// on the vhost that holds the certificate) joined to one end of a local socket pair
/// (`plain`, adopted as a raw socket) whose other end (`inner`) is the libwebsockets
/// WebSocket. It exists only from an admitted upgrade on: until then a TLS connection is an
/// `HTTPConnection` served straight from libwebsockets' decrypted reads (`ServiceLoop+TLS`).
///
/// Why a pair for WebSockets: libwebsockets 4.1 cannot turn a raw TLS socket into a WebSocket
/// (the role change is internal), nor take over a TLS session from our code; so the
/// WebSocket framing stays libwebsockets' own and the bytes cross the pair.
///
/// Flow control: bytes read from one side are written to the other with `lws_write`; when
/// that side cannot take them all (libwebsockets keeps the rest), reading stops on this side
/// until the other is writable again, so at most one read is buffered per direction. A peer
/// that stops reading fills the TCP socket and then the pair; the write-stall deadline counts
/// both queues (`relayQueued`), and a drop resets the TCP socket at once (`resetRelay`). When
/// either side closes, the other is flushed and closed (within `relayCloseGrace`).
/// Owned by its service loop; only that loop's thread touches it.
final class TLSRelay {
    let tls: OpaquePointer
    let plain: OpaquePointer
    /// The pair's end libwebsockets serves the WebSocket on, and the TCP socket under `tls`
    /// (both owned by libwebsockets; kept to read their queues and to reset).
    let inner: Int32
    let tcp: Int32
    /// The TCP peer's address (the WebSocket's own socket has none).
    let peer: String
    /// One side has gone: the survivor closes once what it holds is written.
    var closing = false
    var tlsGone = false
    var plainGone = false

    init(tls: OpaquePointer, plain: OpaquePointer, inner: Int32, tcp: Int32, peer: String) {
        self.tls = tls
        self.plain = plain
        self.inner = inner
        self.tcp = tcp
        self.peer = peer
    }

    /// The other side of `wsi`, while it is open.
    func partner(of wsi: OpaquePointer) -> OpaquePointer? {
        if wsi == tls { return plainGone ? nil : plain }
        return tlsGone ? nil : tls
    }

    /// Records that `wsi` is gone; returns the survivor to close, the first time only.
    func gone(_ wsi: OpaquePointer) -> OpaquePointer? {
        if wsi == tls { tlsGone = true } else { plainGone = true }
        let survivor = partner(of: wsi)
        if closing { return nil }
        closing = true
        return survivor
    }
}
