import Foundation

/// Every valid API token a server knows, by digest: loaded at start and kept current from the
/// token change log, so a WebSocket upgrade is decided from memory, never by a database call
/// on a service loop. Pure; the server guards its one instance with a lock.
public struct TokenTable: Sendable {
    struct Entry: Sendable, Equatable {
        var identity: Identity
        var expiresAt: Date?
    }

    private var entries: [TokenDigest: Entry] = [:]

    public init() {}

    public var count: Int { entries.count }

    /// The identity of a token that is valid at `now`.
    public func identity(for digest: TokenDigest, now: Date) -> Identity? {
        guard let entry = entries[digest] else { return nil }
        if let expires = entry.expiresAt, expires <= now { return nil }
        return entry.identity
    }

    /// True when the digest is in the table, valid or expired but not yet dropped.
    public func contains(_ digest: TokenDigest) -> Bool { entries[digest] != nil }

    /// Adds or replaces a valid token: who it authenticates, and until when (nil: no end).
    public mutating func insert(_ digest: TokenDigest, identity: Identity, expiresAt: Date?) {
        entries[digest] = Entry(identity: identity, expiresAt: expiresAt)
    }

    /// Forgets a token; true when it was known (so its open connections must be closed).
    @discardableResult
    public mutating func remove(_ digest: TokenDigest) -> Bool {
        entries.removeValue(forKey: digest) != nil
    }

    /// Drops tokens expired by `now`; returns them.
    public mutating func removeExpired(now: Date) -> [TokenDigest] {
        let expired = entries.filter { $0.value.expiresAt.map { $0 <= now } ?? false }.map(\.key)
        for digest in expired { entries[digest] = nil }
        return expired
    }
}
