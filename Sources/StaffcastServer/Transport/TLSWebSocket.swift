import StaffcastCore

/// One WebSocket over TLS, served by its service loop on the same libwebsockets TLS wsi the
/// HTTP front used for the upgrade request (`ServiceLoop+WSS`): libwebsockets does the TLS
/// only, and the framing is staffcast's (`WebSocketFrameReader` in, whole frames out with
/// `LWS_WRITE_RAW`, as for every WebSocket). So a wss connection holds one descriptor, like
/// a ws one. Owned by its service loop; only that loop's thread touches it.
final class TLSWebSocket {
    let wsi: OpaquePointer
    /// The engine's connection id.
    let id: Int
    var reader = WebSocketFrameReader()
    /// The answer to the peer's latest ping, not yet written (an older one is replaced: RFC
    /// 6455 5.5.3 lets a pong answer only the most recent ping), so at most 127 bytes wait.
    var pong: [UInt8]?
    /// A close frame to write (ours, or the answer to the peer's), then nothing more.
    var closeFrame: [UInt8]?
    /// When our close went out (monotonic seconds): the peer has `closeGrace` to answer
    /// before the socket is closed anyway.
    var closeSentAt: Double?
    /// Close the socket once everything written has left libwebsockets: after the answer to
    /// the peer's close, or after a close for a broken rule.
    var endWhenFlushed = false
    /// The socket is being closed; nothing more is read or written.
    var ended = false

    init(wsi: OpaquePointer, id: Int) {
        self.wsi = wsi
        self.id = id
    }

    /// Our close has been sent (or queued): frames and engine writes stop.
    var isClosing: Bool { closeFrame != nil || closeSentAt != nil || endWhenFlushed }
}
