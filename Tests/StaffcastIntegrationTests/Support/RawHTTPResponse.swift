import Foundation

/// One HTTP/1.1 response exactly as it came off the wire.
struct RawHTTPResponse: CustomStringConvertible {
    var statusLine: String
    var status: Int
    var headers: [(name: String, value: String)]
    var body: [UInt8]

    /// The first header with this name (case-insensitive).
    func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    /// Every header with this name (case-insensitive).
    func headers(_ name: String) -> [String] {
        headers.filter { $0.name.lowercased() == name.lowercased() }.map(\.value)
    }

    var bodyText: String { String(decoding: body, as: UTF8.self) }

    /// The body as a JSON object, or nil.
    var json: [String: Any]? { try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] }

    /// `error.code` of a JSON error body, or nil.
    var errorCode: String? { (json?["error"] as? [String: Any])?["code"] as? String }

    var description: String {
        "\(statusLine) [\(headers.map { "\($0.name): \($0.value)" }.joined(separator: "; "))] \(bodyText.prefix(300))"
    }
}
