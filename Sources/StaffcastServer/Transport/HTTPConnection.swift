import Foundation
import StaffcastCore

/// One TCP connection while it speaks HTTP (before a WebSocket upgrade hands it to
/// libwebsockets): a socket the loop reads and writes itself, or, on a TLS port, a
/// libwebsockets TLS wsi whose decrypted bytes the loop is given (`tls`, `ServiceLoop+TLS`).
/// Owned by its service loop; only that loop's thread touches it.
///
/// Requests pipelined on one keep-alive connection are answered in order: each gets a slot in
/// `answers` when it is framed, filled when its answer is ready (possibly out of order, from a
/// database worker), and written once every earlier one is. At most `maxPipelined` wait; past
/// that the loop stops framing (and so reading) until answers go out.
final class HTTPConnection {
    static let maxPipelined = 16
    /// Read no further while this much is buffered and unframed (the parser refuses anything
    /// larger than a head plus a body anyway).
    static let maxBuffered = 8_192 + Limits.maxFrameBytes + 16_384

    struct Answer {
        var id: Int
        var bytes: [UInt8]?
    }

    let fd: Int32
    /// The libwebsockets wsi doing TLS on `fd` (which libwebsockets then owns), or nil.
    let tls: OpaquePointer?
    /// TLS only: decrypted bytes have arrived (the handshake is done); reading is paused.
    var tlsEstablished = false
    var readPaused = false
    /// Distinguishes this connection from a later one that reuses its descriptor.
    let serial: Int
    let peer: String
    var input: [UInt8] = []
    var output: [UInt8] = []
    var answers: [Answer] = []
    var nextAnswer = 0
    /// No request after the ones framed so far will be read (Connection: close, a framing
    /// error, the peer's end of stream, or shutdown): close once the answers are out.
    var closeAfterAnswers = false
    var peerClosed = false
    var sentContinue = false
    /// An upgrade waits for its token to be looked up (`TokenResolver`): nothing more is framed
    /// until the answer; the lookup's own deadline ends the wait.
    var awaitingToken = false
    /// Monotonic seconds: when the request being received began (or the connection opened),
    /// when anything last happened, and when written bytes last left.
    var requestStartedAt: Double
    var lastActivity: Double
    var lastWriteProgress: Double
    /// Bytes waiting to leave (ours and the kernel's) at the last tick (`writeStalled`).
    var lastQueued = 0
    var writeInterest = false

    init(fd: Int32, serial: Int, peer: String, now: Double, tls: OpaquePointer? = nil) {
        self.fd = fd
        self.tls = tls
        self.serial = serial
        self.peer = peer
        requestStartedAt = now
        lastActivity = now
        lastWriteProgress = now
    }

    /// A slot for the next request's answer.
    func reserveAnswer() -> Int {
        defer { nextAnswer += 1 }
        answers.append(Answer(id: nextAnswer, bytes: nil))
        return nextAnswer
    }

    /// Fills a slot; false when the slot is unknown (the connection was reset meanwhile).
    func fill(_ id: Int, _ bytes: [UInt8]) -> Bool {
        guard let i = answers.firstIndex(where: { $0.id == id }) else { return false }
        answers[i].bytes = bytes
        return true
    }

    /// Moves every answer that is ready and next in order to `output`.
    func releaseReadyAnswers() {
        while let first = answers.first, let bytes = first.bytes {
            output += bytes
            answers.removeFirst()
        }
    }

    var isIdle: Bool { input.isEmpty && answers.isEmpty && output.isEmpty }
    var isFinished: Bool { closeAfterAnswers && answers.isEmpty && output.isEmpty }
}
