import Foundation

/// Which server the bench drives (`--server-kind`, SERVER_KIND). staffcast is the default and
/// its path is unchanged; the peers are driven with the same subscriber code (raw WebSockets on
/// epoll) and the same scenarios, each speaking its own protocol (bench/README.md: Peers):
/// - nchan: a WebSocket subscriber at `/sub/bench` (subscribed as soon as the upgrade answers
///   101), publishing by HTTP POST to `/pub/bench` on keep-alive connections (201/202 = ack);
/// - NATS: the websocket listener speaking the NATS text protocol (CONNECT, SUB, PING → PONG =
///   subscribed), publishing over the TCP client port with `verbose` on (one `+OK` per PUB = ack).
/// The message text is the same everywhere: `bench-t=<monotonic ns> n=<index>`. The peers have
/// no sequence numbers, so a delivery's index is the publisher's `n`.
enum Target: String, CaseIterable {
    case staffcast, nchan, nats

    /// The peers keep messages in memory only; staffcast commits each before acknowledging it.
    var durable: Bool { self == .staffcast }

    var title: String {
        switch self {
        case .staffcast: return "staffcast"
        case .nchan: return "nchan"
        case .nats: return "NATS"
        }
    }
}

/// The WebSocket upgrade of a subscriber of `target` (staffcast: /v1/ws with the token).
func upgradeRequest(target: Target, host: String, port: Int, token: String) -> [UInt8] {
    let path: String
    switch target {
    case .staffcast: return upgradeRequest(host: host, port: port, token: token)
    case .nchan: path = "/sub/bench"
    case .nats: path = "/"
    }
    return Array(("GET \(path) HTTP/1.1\r\nHost: \(host):\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n").utf8)
}

/// What a NATS subscriber sends right after the upgrade: the PONG to its PING says the SUB
/// has been processed (the equivalent of staffcast's `subscribed` reply).
let natsSubscribe = Array("CONNECT {\"verbose\":false,\"pedantic\":false,\"protocol\":1}\r\nSUB bench 1\r\nPING\r\n".utf8)

extension Needles {
    /// The publisher's message index in the text, `n=<i>` (the peers have no seq).
    static let index = Needle(" n=")
}

/// The NATS text protocol as a subscriber or a publisher reads it: a byte stream (the websocket
/// listener's frames need not end at a protocol line), cut into operations.
enum NATSOp {
    case msg(payload: UnsafePointer<UInt8>, length: Int)
    case ping, pong, ok, info
    case err(String)
}

/// Splits whole NATS operations off the front of p[0..<n]; calls `body` for each; returns the
/// bytes used (an incomplete operation stays for the next read). A line that is none of the
/// known operations ends the parse with `.err`.
@inline(__always) func splitNATS(_ p: UnsafePointer<UInt8>, _ n: Int, _ body: (NATSOp) -> Void) -> Int {
    var o = 0
    while o < n {
        let lineEnd = Needles.crlf.find(p + o, n - o)
        if lineEnd < 0 { break }
        if lineEnd == 0 { o += 2; continue } // an empty line (NATS sends none; harmless)
        let line = p + o
        let c0 = line[0] | 0x20
        if c0 == 0x6D { // "MSG subject sid [reply] length"
            // The length is the last token of the line.
            var i = lineEnd - 1
            while i > 0 && line[i] != 0x20 { i -= 1 }
            let length = Int(integer(at: i + 1, in: line, lineEnd) ?? 0)
            let total = lineEnd + 2 + length + 2
            if n - o < total { break }
            body(.msg(payload: line + lineEnd + 2, length: length))
            o += total
            continue
        }
        switch c0 {
        case 0x70: body(lineEnd >= 4 && (line[1] | 0x20) == 0x6F ? .pong : .ping) // PING / PONG
        case 0x2B: body(.ok)                                                      // +OK
        case 0x69: body(.info)                                                    // INFO {…}
        default: body(.err(String(decoding: UnsafeBufferPointer(start: line, count: min(lineEnd, 160)), as: UTF8.self)))
        }
        o += lineEnd + 2
    }
    return o
}

extension Needles {
    static let crlf = Needle("\r\n")
}
