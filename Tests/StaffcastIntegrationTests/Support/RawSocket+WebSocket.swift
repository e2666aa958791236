import Foundation
import StaffcastClient
#if canImport(Glibc)
import Glibc
#endif

/// WebSocket (RFC 6455) on a `RawSocket`, just enough to upgrade, send text and read frames.
extension RawSocket {
    /// Sends a WebSocket upgrade for `path` (optionally with a bearer token) and reads the
    /// response: the 101 head (frames after it stay in `buffer`), or a refusal with its body.
    func upgrade(path: String = "/v1/ws", token: String?, extraHeaders: [(String, String)] = [],
                 timeout: TimeInterval = 10) throws -> RawHTTPResponse {
        let key = Data((0..<16).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
        var headers: [(String, String)] = [("Upgrade", "websocket"), ("Connection", "Upgrade"),
                                           ("Sec-WebSocket-Key", key), ("Sec-WebSocket-Version", "13"),
                                           ("Sec-WebSocket-Protocol", "staffcast.v1")]
        if let token { headers.append(("Authorization", "Bearer \(token)")) }
        headers += extraHeaders
        try send(Self.request("GET", path, port: port, headers: headers), timeout: timeout)
        return try readResponse(deadline: Date().addingTimeInterval(timeout))
    }

    /// Sends one masked text frame.
    func sendWebSocketText(_ text: String) throws {
        let payload = Array(text.utf8)
        var frame: [UInt8] = [0x81]
        if payload.count < 126 {
            frame.append(0x80 | UInt8(payload.count))
        } else if payload.count <= 0xFFFF {
            frame += [0x80 | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        } else {
            frame.append(0x80 | 127)
            for shift in stride(from: 56, through: 0, by: -8) { frame.append(UInt8((payload.count >> shift) & 0xFF)) }
        }
        let mask = (0..<4).map { _ in UInt8.random(in: 0...255) }
        frame += mask
        for (i, b) in payload.enumerated() { frame.append(b ^ mask[i & 3]) }
        try send(frame)
    }

    /// The next frame from the server (opcode and unmasked payload); nil if none starts before
    /// `deadline`. Throws when the connection ends.
    func readWebSocketFrame(deadline: Date) throws -> (opcode: UInt8, payload: [UInt8])? {
        while buffer.count < 2 {
            switch readSome(deadline: deadline) {
            case .data: continue
            case .timeout: return nil
            case .eof: throw RawSocketError("the server closed the connection (EOF) between frames")
            case .reset(let why): throw RawSocketError("the connection failed between frames: \(why)")
            }
        }
        let far = Date().addingTimeInterval(5) // a frame that has started must finish
        let opcode = buffer[0] & 0x0F
        let masked = buffer[1] & 0x80 != 0
        var length = Int(buffer[1] & 0x7F)
        var offset = 2
        if length == 126 {
            try need(4, "a frame length", deadline: far)
            length = Int(buffer[2]) << 8 | Int(buffer[3])
            offset = 4
        } else if length == 127 {
            try need(10, "a frame length", deadline: far)
            length = buffer[2..<10].reduce(0) { $0 << 8 | Int($1) }
            offset = 10
        }
        let maskOffset = offset
        if masked { offset += 4 }
        try need(offset + length, "a \(length)-byte frame", deadline: far)
        var payload = Array(buffer[offset..<(offset + length)])
        if masked {
            let mask = Array(buffer[maskOffset..<(maskOffset + 4)])
            for i in payload.indices { payload[i] ^= mask[i & 3] }
        }
        buffer.removeFirst(offset + length)
        return (opcode, payload)
    }
}
