/// An error meant for a person: a protocol `code` plus one sentence that says what went wrong
/// and, where it helps, what to do. Every failure that reaches a client becomes one of these.
public struct StaffcastError: Error, Equatable, Sendable, CustomStringConvertible {
    public var code: ErrorCode
    public var message: String

    public init(_ code: ErrorCode, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code): \(message)" }

    public static func invalid(_ message: String) -> StaffcastError { .init(.invalid, message) }
    public static func notFound(_ message: String) -> StaffcastError { .init(.notFound, message) }
    public static func forbidden(_ message: String) -> StaffcastError { .init(.forbidden, message) }
    public static func unavailable(_ message: String) -> StaffcastError { .init(.unavailable, message) }
}

extension StaffcastError {
    /// Whether what this refused gives back its place in a rate limit (send, reply, answer):
    /// only a refusal before anything was looked at (`unavailable`: the database down, the
    /// server overloaded). A refusal the database decided (forbidden, a duplicate) counts: it
    /// cost a transaction, and refunding it would remove the limit for such requests.
    public var refundsRateLimit: Bool { code == .unavailable }
}
