/// One TLS connection on a service loop, when `tls_cert`/`tls_key` are set.
///
/// libwebsockets terminates TLS: the accepted socket is adopted as a raw socket on the vhost
/// that holds the certificate (`tls`), and its decrypted bytes are relayed to one end of a
/// local socket pair (`plain`, adopted as a raw socket too). The other end of the pair goes
/// to the loop's plain-HTTP front exactly as an accepted TCP socket would, so TLS connections
/// get the same HTTP framing, routes, deadlines and upgrade decision (token table and caps,
/// from memory), and an admitted upgrade becomes a libwebsockets WebSocket as usual.
///
/// Why a relay rather than libwebsockets' own HTTP server on the TLS socket: one HTTP
/// implementation for both ports (the lws 4.1.6 HTTP server spins at 100 % CPU on a pipelined
/// second body), and a TLS session cannot be handed from our code to libwebsockets mid-stream.
/// The cost is two more descriptors and one more copy per TLS connection.
///
/// Flow control: bytes read from one side are written to the other with `lws_write`; when
/// that side cannot take them all (libwebsockets keeps the rest), reading stops on this side
/// until the other is writable again, so at most one read is buffered per direction and a
/// peer that stops reading fills the socket pair, where the WebSocket's write-stall deadline
/// sees it. When either side closes, the other is flushed and closed (within `closeGrace`).
/// Owned by its service loop; only that loop's thread touches it.
final class TLSRelay {
    let tls: OpaquePointer
    let plain: OpaquePointer
    /// One side has gone: the survivor closes once what it holds is written.
    var closing = false
    var tlsGone = false
    var plainGone = false
    /// libwebsockets arms a 10 s "establish" timeout when the TLS handshake completes, which
    /// only its HTTP role clears; the relay clears it at the first decrypted bytes, after which
    /// the HTTP front's deadlines (and the WebSocket's heartbeats) govern the connection.
    var establishTimeoutCleared = false

    init(tls: OpaquePointer, plain: OpaquePointer) {
        self.tls = tls
        self.plain = plain
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
