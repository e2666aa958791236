import StaffcastCore

/// One WebSocket, ws or wss, served by its service loop on a raw libwebsockets wsi: the
/// socket the HTTP front adopted for the upgrade (plain), or the TLS wsi that carried the
/// upgrade request. libwebsockets moves bytes (and does the TLS); the WebSocket is
/// staffcast's (`ServiceLoop+FramedWebSockets`): the `101`, `WebSocketFrameReader` in, whole
/// frames out with `LWS_WRITE_RAW`. Owned by its service loop; only that loop's thread
/// touches it.
final class FramedWebSocket {
    let wsi: OpaquePointer
    /// The engine's connection id.
    let id: Int
    var reader = WebSocketFrameReader()
    /// The `101` answer, until it goes out in front of the first frames (`hello`): one write,
    /// one wake-up of the peer, for both.
    var handshakeAnswer: [UInt8]?
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

    init(wsi: OpaquePointer, id: Int, handshakeAnswer: [UInt8]) {
        self.wsi = wsi
        self.id = id
        self.handshakeAnswer = handshakeAnswer
    }

    /// Our close has been sent (or queued): frames and engine writes stop.
    var isClosing: Bool { closeFrame != nil || closeSentAt != nil || endWhenFlushed }
}
