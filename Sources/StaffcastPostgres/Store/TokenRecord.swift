import Foundation
import StaffcastCore

/// One valid token as a server holds it in memory: who it authenticates, and until when.
public struct TokenRecord: Sendable, Equatable {
    public var digest: TokenDigest
    public var identity: Identity
    /// Nil: never expires. A server refuses the token from this moment on by itself.
    public var expiresAt: Date?
}
