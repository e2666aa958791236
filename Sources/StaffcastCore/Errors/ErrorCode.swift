/// The machine-readable error codes of protocol v1 (docs/protocol.md), shared by WebSocket
/// `error` frames and HTTP error bodies. A struct rather than an enum so that new codes can be
/// added without breaking exhaustive switches in callers (as postgres-nio does).
public struct ErrorCode: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String
    public init(_ rawValue: String) { self.rawValue = rawValue }

    public static let unauthorized = ErrorCode("unauthorized")
    public static let forbidden = ErrorCode("forbidden")
    public static let notFound = ErrorCode("not_found")
    public static let invalid = ErrorCode("invalid")
    public static let tooLarge = ErrorCode("too_large")
    public static let rateLimited = ErrorCode("rate_limited")
    public static let unavailable = ErrorCode("unavailable")
    public static let `internal` = ErrorCode("internal")
    /// The same text went to the same event moments ago (the double-send guard, docs/protocol.md).
    public static let conflict = ErrorCode("conflict")
    /// An invite that expired, was used up or was revoked (HTTP 410).
    public static let gone = ErrorCode("gone")

    public static let all: [ErrorCode] = [.unauthorized, .forbidden, .notFound, .invalid, .tooLarge,
                                          .rateLimited, .unavailable, .internal, .conflict, .gone]

    /// The HTTP status that goes with the code (docs/protocol.md, HTTP API).
    public var httpStatus: Int {
        switch self {
        case .invalid: return 400
        case .unauthorized: return 401
        case .forbidden: return 403
        case .notFound: return 404
        case .conflict: return 409
        case .tooLarge: return 413
        case .rateLimited: return 429
        case .gone: return 410
        case .unavailable: return 503
        default: return 500
        }
    }

    public var description: String { rawValue }
}
