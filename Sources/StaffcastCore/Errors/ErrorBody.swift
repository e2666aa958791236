import Foundation

/// The body of every HTTP API error: `{"error": {"code", "message"}}`. The server encodes it;
/// `APIClient` and `staffcast join` decode it (a code they do not know stays text).
public struct ErrorBody: Sendable, Equatable, Codable {
    public struct Detail: Sendable, Equatable, Codable {
        public var code: String
        public var message: String
    }

    public var error: Detail

    public init(_ e: StaffcastError) {
        error = Detail(code: e.code.rawValue, message: e.message)
    }

    /// The error an HTTP answer carries, if its body is one.
    public static func decode(_ body: Data) -> Detail? {
        (try? JSONDecoder().decode(ErrorBody.self, from: body))?.error
    }
}
