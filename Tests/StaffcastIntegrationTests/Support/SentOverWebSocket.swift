import Foundation
import StaffcastCore

/// What a client sent on one WebSocket connection: its upgrade request's line, and the `op` of
/// each text frame after it (unmasked by the server's own frame reader).
struct SentOverWebSocket {
    let requestLine: String
    let ops: [String]

    init?(_ bytes: [UInt8]) {
        guard let end = bytes.firstRange(of: [13, 10, 13, 10]) else { return nil }
        let head = String(decoding: bytes[..<end.lowerBound], as: UTF8.self)
        guard let line = head.components(separatedBy: "\r\n").first, line.hasPrefix("GET /v1/ws") else { return nil }
        requestLine = line
        var reader = WebSocketFrameReader()
        var message: [UInt8] = []
        var ops: [String] = []
        let rest = Array(bytes[end.upperBound...])
        for event in rest.withUnsafeBytes({ reader.read($0) }) {
            guard case .data(let chunk, let final, let binary) = event, !binary else { continue }
            message += chunk
            guard final else { continue }
            let object = try? JSONSerialization.jsonObject(with: Data(message)) as? [String: Any]
            ops.append(object?["op"] as? String ?? "?")
            message = []
        }
        self.ops = ops
    }

    /// The request target's path and query, e.g. `/v1/ws` and `["subscribe": "…"]`.
    var path: String { URLComponents(string: target)?.path ?? target }
    var query: [String: String] {
        var out: [String: String] = [:]
        for item in URLComponents(string: target)?.queryItems ?? [] { out[item.name] = item.value ?? "" }
        return out
    }

    private var target: String { requestLine.split(separator: " ").dropFirst().first.map(String.init) ?? "" }
}
