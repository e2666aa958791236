import Foundation

// WebSocket frames as a client writes them (masked, with a zero mask, which RFC 6455 allows),
// and the upgrade request.

func clientFrame(opcode: UInt8, _ payload: UnsafeRawBufferPointer) -> [UInt8] {
    var f: [UInt8] = [0x80 | opcode]
    let n = payload.count
    if n < 126 {
        f.append(0x80 | UInt8(n))
    } else if n <= 0xFFFF {
        f += [0x80 | 126, UInt8(n >> 8), UInt8(n & 0xFF)]
    } else {
        f.append(0x80 | 127)
        for shift in stride(from: 56, through: 0, by: -8) { f.append(UInt8((n >> shift) & 0xFF)) }
    }
    f += [0, 0, 0, 0]
    f += payload
    return f
}

func clientFrame(text: String) -> [UInt8] {
    Array(text.utf8).withUnsafeBytes { clientFrame(opcode: 0x1, $0) }
}

/// Splits complete server frames (unmasked) off the front of p[0..<n]. Calls `body` with
/// (fin, opcode, payload, length) for each; `body` returns false to stop. Returns the bytes used.
@inline(__always) func splitFrames(_ p: UnsafePointer<UInt8>, _ n: Int,
                                   _ body: (Bool, UInt8, UnsafePointer<UInt8>, Int) -> Bool) -> Int {
    var o = 0
    while n - o >= 2 {
        let b0 = p[o], b1 = p[o + 1]
        var len = Int(b1 & 0x7F)
        var head = 2
        if len == 126 {
            guard n - o >= 4 else { break }
            len = Int(p[o + 2]) << 8 | Int(p[o + 3])
            head = 4
        } else if len == 127 {
            guard n - o >= 10 else { break }
            len = 0
            for k in 0..<8 { len = len << 8 | Int(p[o + 2 + k]) }
            head = 10
        }
        if b1 & 0x80 != 0 { head += 4 } // servers do not mask; skip a mask key if one comes anyway
        guard n - o >= head + len else { break }
        let payload = p + o + head
        o += head + len
        if !body(b0 & 0x80 != 0, b0 & 0x0F, payload, len) { break }
    }
    return o
}

/// The request line and headers of a WebSocket upgrade to /v1/ws with a bearer token;
/// `query` (`subscribe=…&since_seq=…`) subscribes in the URL.
func upgradeRequest(host: String, port: Int, token: String, query: String = "") -> [UInt8] {
    Array(("GET /v1/ws\(query.isEmpty ? "" : "?" + query) HTTP/1.1\r\nHost: \(host):\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
        + "Sec-WebSocket-Protocol: staffcast.v1\r\nAuthorization: Bearer \(token)\r\n\r\n").utf8)
}
