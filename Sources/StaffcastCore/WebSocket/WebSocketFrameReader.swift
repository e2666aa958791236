/// The server side of RFC 6455 framing for the WebSockets a service loop serves itself (over
/// TLS, on the same wsi as the HTTP front): bytes in, in any cuts, and events out: chunks of
/// data messages, pings, pongs, the peer's close, or a failure that ends the connection.
///
/// It buffers no message: a data frame's payload is unmasked and handed on as it arrives
/// (`.data`, `final` on the message's last byte), so the fan-out engine assembles and bounds
/// messages exactly as it does for libwebsockets' WebSockets (`Limits.maxFrameBytes`, then
/// `too_large`); what it holds is at most one frame header (14 bytes) and one control payload
/// (125 bytes). The rules: client frames are masked; no extension bits; known opcodes only;
/// control frames are whole and at most 125 bytes; continuation frames follow a message that
/// is not finished and nothing else does; text is UTF-8 (checked as it streams, also across
/// fragments); a close carries no code, or a valid one and a UTF-8 reason. A broken rule is
/// `.failure` with the close code to send (1002, or 1007 for text that is not UTF-8); after it,
/// or after the peer's close, every further byte is ignored.
///
/// A value type with no I/O; its service loop's thread owns it.
public struct WebSocketFrameReader: Sendable {
    public enum Event: Sendable, Equatable {
        /// A run of a data message's payload, unmasked; `final`: the message ends here.
        case data([UInt8], final: Bool, binary: Bool)
        case ping([UInt8])
        case pong([UInt8])
        /// The peer closes (`code` nil: it gave none); answer with a close, then end.
        case close(code: UInt16?, reason: String)
        /// A broken rule: send a close with `code`, then end the connection.
        case failure(code: UInt16, reason: String)
    }

    public static let protocolError: UInt16 = 1002
    public static let invalidPayload: UInt16 = 1007
    /// The largest control frame payload (RFC 6455 5.5).
    public static let maxControlPayload = 125

    /// The frame being read: its header fields once whole, and how much payload is left.
    private var header: [UInt8] = []
    private var opcode: UInt8 = 0
    private var fin = false
    private var mask: (UInt8, UInt8, UInt8, UInt8) = (0, 0, 0, 0)
    private var maskOffset = 0
    private var remaining: UInt64 = 0
    private var inPayload = false
    private var control: [UInt8] = []
    /// The data message in progress (its first frame was not final): text or binary.
    private var messageOpcode: UInt8?
    private var utf8 = UTF8Validator()
    /// Closed or failed: nothing more is read.
    public private(set) var isFinished = false

    public init() {}

    /// Reads what arrived; returns what it completes, in order.
    public mutating func read(_ bytes: UnsafeRawBufferPointer) -> [Event] {
        var events: [Event] = []
        var index = 0
        while index < bytes.count, !isFinished {
            if !inPayload {
                header.append(bytes[index])
                index += 1
                if let failure = parseHeader() {
                    return finish(events + [failure])
                }
                if inPayload, remaining == 0 { endFrame(into: &events) }
                continue
            }
            let take = Int(min(remaining, UInt64(bytes.count - index)))
            var chunk = [UInt8](repeating: 0, count: take)
            for i in 0..<take {
                chunk[i] = bytes[index + i] ^ maskByte(maskOffset + i)
            }
            maskOffset = (maskOffset + take) & 3
            index += take
            remaining -= UInt64(take)
            if opcode >= 0x8 {
                control += chunk
            } else {
                if messageOpcode == 0x1, !utf8.feed(chunk) {
                    return finish(events + [.failure(code: Self.invalidPayload, reason: "text is not UTF-8")])
                }
                if remaining > 0 || !fin {
                    events.append(.data(chunk, final: false, binary: currentBinary))
                } else {
                    // The last chunk goes out with `final` below.
                    control = chunk
                }
            }
            if remaining == 0 { endFrame(into: &events) }
        }
        return events
    }

    /// `read` for an array (tests, the fuzz target).
    public mutating func read(_ bytes: [UInt8]) -> [Event] {
        bytes.withUnsafeBytes { read($0) }
    }

    private var currentBinary: Bool { (messageOpcode ?? opcode) == 0x2 }

    private func maskByte(_ offset: Int) -> UInt8 {
        switch offset & 3 {
        case 0: return mask.0
        case 1: return mask.1
        case 2: return mask.2
        default: return mask.3
        }
    }

    private mutating func finish(_ events: [Event]) -> [Event] {
        isFinished = true
        header = []
        control = []
        return events
    }

    /// Once the header is whole: checks it and starts the payload. Nil while more is needed
    /// or when it is valid; a failure otherwise.
    private mutating func parseHeader() -> Event? {
        guard header.count >= 2 else { return nil }
        let b0 = header[0]
        let b1 = header[1]
        let short = UInt64(b1 & 0x7F)
        let lengthBytes = short == 126 ? 2 : (short == 127 ? 8 : 0)
        let needed = 2 + lengthBytes + 4
        if header.count == 2 {
            // Judge what can be judged from the first two bytes at once.
            if b0 & 0x70 != 0 { return fail("reserved bits set (no extension was agreed)") }
            let op = b0 & 0x0F
            switch op {
            case 0x0, 0x1, 0x2, 0x8, 0x9, 0xA: break
            default: return fail("unknown opcode \(op)")
            }
            if b1 & 0x80 == 0 { return fail("client frames must be masked") }
            if op >= 0x8 {
                if b0 & 0x80 == 0 { return fail("control frames must not be fragmented") }
                if short > UInt64(Self.maxControlPayload) { return fail("control frames carry at most 125 bytes") }
            } else if op == 0x0 {
                if messageOpcode == nil { return fail("a continuation frame without a message to continue") }
            } else if messageOpcode != nil {
                return fail("a new message began before the fragmented one ended")
            }
        }
        // RFC 6455 5.2: a 64-bit length has its most significant bit clear (judged as soon as
        // that byte is in).
        if lengthBytes == 8, header.count == 3, header[2] & 0x80 != 0 { return fail("the payload length's top bit is set") }
        guard header.count == needed else { return nil }
        var length = short
        if lengthBytes > 0 {
            length = 0
            for i in 0..<lengthBytes { length = length << 8 | UInt64(header[2 + i]) }
        }
        opcode = header[0] & 0x0F
        fin = header[0] & 0x80 != 0
        let m = needed - 4
        mask = (header[m], header[m + 1], header[m + 2], header[m + 3])
        maskOffset = 0
        remaining = length
        inPayload = true
        header = []
        control = []
        if opcode == 0x1 || opcode == 0x2 {
            messageOpcode = opcode
            utf8 = UTF8Validator()
        }
        return nil
    }

    private mutating func fail(_ reason: String) -> Event {
        .failure(code: Self.protocolError, reason: reason)
    }

    /// The frame's payload is all read.
    private mutating func endFrame(into events: inout [Event]) {
        inPayload = false
        let payload = control
        control = []
        switch opcode {
        case 0x8:
            events.append(closeEvent(payload))
            _ = finish([])
        case 0x9:
            events.append(.ping(payload))
        case 0xA:
            events.append(.pong(payload))
        default:
            let binary = currentBinary
            guard fin else {
                // A zero-length fragment in the middle says nothing; a chunk already went out.
                return
            }
            if messageOpcode == 0x1, !utf8.isComplete {
                events.append(.failure(code: Self.invalidPayload, reason: "text ends inside a UTF-8 sequence"))
                _ = finish([])
                return
            }
            messageOpcode = nil
            events.append(.data(payload, final: true, binary: binary))
        }
    }

    /// The peer's close frame: no payload, or a valid code and a UTF-8 reason.
    private func closeEvent(_ payload: [UInt8]) -> Event {
        if payload.isEmpty { return .close(code: nil, reason: "") }
        if payload.count == 1 { return .failure(code: Self.protocolError, reason: "a close payload of one byte") }
        let code = UInt16(payload[0]) << 8 | UInt16(payload[1])
        guard Self.isValidCloseCode(code) else {
            return .failure(code: Self.protocolError, reason: "close code \(code) may not be sent")
        }
        var check = UTF8Validator()
        let reason = payload[2...]
        guard check.feed(reason), check.isComplete else {
            return .failure(code: Self.invalidPayload, reason: "the close reason is not UTF-8")
        }
        return .close(code: code, reason: String(decoding: reason, as: UTF8.self))
    }

    /// Codes a peer may send (RFC 6455 7.4: the registered ones, then 3000–4999).
    public static func isValidCloseCode(_ code: UInt16) -> Bool {
        switch code {
        case 1000...1003, 1007...1014, 3000...4999: return true
        default: return false
        }
    }
}
