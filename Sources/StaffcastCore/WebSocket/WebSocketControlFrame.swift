/// The control frames a server writes itself (RFC 6455 5.5): ping, pong and close, unmasked
/// and whole, as bytes ready for the socket. Data frames are `OutFrame`s made once by the
/// change feed; these are the few a connection's own state asks for.
public enum WebSocketControlFrame {
    /// The server's heartbeat ping; its payload comes back in the pong.
    public static let heartbeat = ping(Array("hb".utf8))

    public static func ping(_ payload: [UInt8]) -> [UInt8] { frame(0x9, payload) }

    /// The answer to a ping: its payload, echoed.
    public static func pong(_ payload: [UInt8]) -> [UInt8] { frame(0xA, payload) }

    /// A close with `code` and a reason cut (on a character boundary) to fit in 123 bytes.
    public static func close(code: UInt16, reason: String) -> [UInt8] {
        var text = Substring(reason)
        while text.utf8.count > WebSocketFrameReader.maxControlPayload - 2 { text = text.dropLast() }
        return frame(0x8, [UInt8(code >> 8), UInt8(code & 0xFF)] + Array(text.utf8))
    }

    /// A close answering the peer's: its code echoed (none if it gave none).
    public static func closeReply(code: UInt16?) -> [UInt8] {
        guard let code else { return frame(0x8, []) }
        return frame(0x8, [UInt8(code >> 8), UInt8(code & 0xFF)])
    }

    private static func frame(_ opcode: UInt8, _ payload: [UInt8]) -> [UInt8] {
        precondition(payload.count <= WebSocketFrameReader.maxControlPayload, "a control frame payload is at most 125 bytes")
        return [0x80 | opcode, UInt8(payload.count)] + payload
    }
}
