import StaffcastCore

/// One WebSocket, ws or wss, framed by staffcast (`ServiceLoop+FramedWebSockets`): the `101`,
/// `WebSocketFrameReader` in, whole frames out. Owned by its service loop; only that loop's
/// thread touches it.
///
/// What carries its bytes (`Carrier`): a plain socket stays on the loop's own epoll set, where
/// the HTTP front accepted it, and the loop reads and writes it itself
/// (`ServiceLoop+PlainSockets`); a TLS one stays on the libwebsockets wsi that did the
/// handshake, which decrypts, encrypts and keeps what the socket did not take.
final class FramedWebSocket {
    enum Carrier {
        /// A plain TCP socket on the loop's epoll set.
        case plain(Int32)
        /// A libwebsockets raw wsi doing TLS.
        case tls(OpaquePointer)
    }

    let carrier: Carrier
    /// The engine's connection id.
    let id: Int
    /// The gatekeeper's slot it holds until it closes.
    let admission: Gatekeeper.Admission
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
    /// Close the socket once everything written has left: after the answer to the peer's
    /// close, or after a close for a broken rule.
    var endWhenFlushed = false
    /// The socket is being closed; nothing more is read or written.
    var ended = false

    // Plain sockets only (the loop's thread).
    /// Bytes the kernel did not take yet, from `unsentStart` on: written before anything
    /// else, when the socket is writable again. Bounded by one write step (the engine writes
    /// nothing more until these are out).
    var unsent: [UInt8] = []
    var unsentStart = 0
    /// Whether the epoll set watches the socket for input (not while the engine pauses
    /// reading) and for writability (only while `unsent` holds bytes).
    var readInterest = true
    var writeInterest = false
    /// Listed in the loop's `writeSoon` (or `writeFirst`), to be written at the end of this turn.
    var writeAsked = false
    /// The kernel held nothing of it at the last sample (`ServiceLoop.tick`) and nothing was
    /// written since: its queue cannot have grown, so the next sample is skipped (an idle
    /// socket costs no ioctl a second). Plain sockets only: libwebsockets writes a TLS
    /// socket's buffered bytes on its own.
    var kernelQueueEmpty = false

    init(carrier: Carrier, id: Int, admission: Gatekeeper.Admission, handshakeAnswer: [UInt8]) {
        self.carrier = carrier
        self.id = id
        self.admission = admission
        self.handshakeAnswer = handshakeAnswer
    }

    /// Our close has been sent (or queued): frames and engine writes stop.
    var isClosing: Bool { closeFrame != nil || closeSentAt != nil || endWhenFlushed }

    /// Plain only: bytes held because the kernel did not take them.
    var holdsUnsent: Bool { unsentCount > 0 }
    var unsentCount: Int { unsent.count - unsentStart }
}
