import Foundation
import StaffcastCore
import StaffcastPostgres
import Synchronization

/// Decides WebSocket upgrades and authenticates HTTP requests from memory: the table of valid
/// token digests (loaded at start, kept current by the change feed) and the connection caps.
///
/// Shared by every service loop and the change feed; everything is behind one lock, held only
/// for a dictionary lookup or two (the SHA-256 of a token is computed before taking it).
final class Gatekeeper: Sendable {
    /// A slot taken for one WebSocket, given back with `release` when it ends.
    struct Admission: Sendable {
        var identity: Identity
        var digest: TokenDigest
    }

    private struct State {
        var tokens = TokenTable()
        /// The seq of the last token change the table reflects (its load, then the feed).
        var appliedThrough: Int64 = 0
        var caps: ConnectionCaps
        /// When each user's WebSockets opened in the last hour (at most 100 each), for status.
        var recentOpens: [UUID: [Date]] = [:]
        /// Tokens used since the last `takeUsed` (for `last_used_at`; bounded).
        var used: Set<TokenDigest> = []
        /// Tokens that ended (expired or revoked) while known, or recently before the start: only
        /// to word a refusal. At most `maxEnded`; when full, later ones are not remembered (they
        /// are refused as "not valid", which is still a refusal).
        var ended: [TokenDigest: TokenEnd] = [:]

        mutating func noteEnd(_ digest: TokenDigest, _ end: TokenEnd) {
            if ended.count < Gatekeeper.maxEnded || ended[digest] != nil { ended[digest] = end }
        }

        mutating func noteUse(_ digest: TokenDigest) {
            if used.count < Gatekeeper.maxUsed { used.insert(digest) }
        }
    }

    /// At most this many distinct tokens are remembered between two flushes of their last use.
    static let maxUsed = 100_000
    /// At most this many ended tokens are remembered for wording refusals.
    static let maxEnded = 100_000

    /// The tokens used since the last call, to be written to `api_tokens.last_used_at`.
    func takeUsed() -> Set<TokenDigest> {
        state.withLock { s in
            defer { s.used.removeAll(keepingCapacity: true) }
            return s.used
        }
    }

    private let state: Mutex<State>

    init(maxConnections: Int, maxPerUser: Int) {
        state = Mutex(State(caps: ConnectionCaps(maxConnections: maxConnections, maxPerUser: maxPerUser)))
    }

    /// Remembers tokens that ended before the start (`Store.endedTokens`), to word refusals.
    func loadEnded(_ ended: [(TokenDigest, TokenEnd)]) {
        state.withLock { s in for (digest, end) in ended { s.noteEnd(digest, end) } }
    }

    /// The 401 error for a token that `identity(for:)` refused: missing, expired, revoked or
    /// unknown.
    func refusal(for token: String?) -> StaffcastError {
        guard let token, !token.isEmpty else { return TokenEnd.refusal(nil, hasToken: false) }
        guard TokenHasher.looksValid(token) else { return TokenEnd.refusal(nil) }
        let digest = TokenHasher.digest(of: token)
        return TokenEnd.refusal(state.withLock { s in s.tokens.contains(digest) ? .expired : s.ended[digest] })
    }

    /// Replaces the table with what the database holds (at start), as of token change `through`.
    func load(_ records: [TokenRecord], through: Int64) {
        var table = TokenTable()
        for r in records { table.insert(r.digest, identity: r.identity, expiresAt: r.expiresAt) }
        state.withLock {
            $0.tokens = table
            $0.appliedThrough = through
        }
    }

    /// What a lookup of one unknown token found (`TokenResolver`), read from a snapshot that
    /// held token changes up to `through`. Taken into the table only when the table is older
    /// than that snapshot: then every later change (a revoke) is still to come from the feed
    /// and will be applied after it. When the table is as new or newer, it already says the
    /// truth (a token missing from it was revoked since). Returns whether the token is valid
    /// in the table now.
    func learn(_ record: TokenRecord?, digest: TokenDigest, through: Int64, now: Date = Date()) -> Bool {
        state.withLock { s in
            if let record, through > s.appliedThrough, record.expiresAt.map({ $0 > now }) ?? true {
                s.tokens.insert(digest, identity: record.identity, expiresAt: record.expiresAt)
            }
            return s.tokens.identity(for: digest, now: now) != nil
        }
    }

    /// Applies token changes in log order; returns the digests that stopped being valid, whose
    /// open WebSockets must be closed.
    func apply(_ changes: [TokenChange], now: Date) -> Set<TokenDigest> {
        state.withLock { s in
            var revoked = Set<TokenDigest>()
            for change in changes {
                s.appliedThrough = max(s.appliedThrough, change.seq)
                if let identity = change.identity, change.expiresAt.map({ $0 > now }) ?? true {
                    s.tokens.insert(change.digest, identity: identity, expiresAt: change.expiresAt)
                    revoked.remove(change.digest)
                } else {
                    s.tokens.remove(change.digest)
                    revoked.insert(change.digest)
                    s.noteEnd(change.digest, change.identity == nil ? .revoked : .expired)
                }
            }
            for digest in s.tokens.removeExpired(now: now) {
                revoked.insert(digest)
                s.noteEnd(digest, .expired)
            }
            return revoked
        }
    }

    /// Forgets tokens whose time ran out; returns them (their sockets must be closed).
    func removeExpired(now: Date = Date()) -> Set<TokenDigest> {
        state.withLock { s in
            let expired = s.tokens.removeExpired(now: now)
            for digest in expired { s.noteEnd(digest, .expired) }
            return Set(expired)
        }
    }

    var tokenCount: Int { state.withLock { $0.tokens.count } }

    /// Who a bearer token belongs to, or nil when it is not a valid token.
    func identity(for token: String?, now: Date = Date()) -> Identity? {
        guard let token, TokenHasher.looksValid(token) else { return nil }
        let digest = TokenHasher.digest(of: token)
        return state.withLock { s in
            let found = s.tokens.identity(for: digest, now: now)
            if found != nil { s.noteUse(digest) }
            return found
        }
    }

    /// True when the token is known to have ended (revoked or expired) and not to be valid
    /// again. A token this server has not heard of yet (issued a moment ago) has not ended.
    func hasEnded(_ digest: TokenDigest, now: Date = Date()) -> Bool {
        state.withLock { s in
            s.tokens.identity(for: digest, now: now) == nil && (s.tokens.contains(digest) || s.ended[digest] != nil)
        }
    }

    func isValid(_ digest: TokenDigest, now: Date = Date()) -> Bool {
        state.withLock { $0.tokens.identity(for: digest, now: now) != nil }
    }

    /// The upgrade decision: a valid token and a free slot, or the error to answer with.
    func admit(token: String?, now: Date = Date()) -> Result<Admission, StaffcastError> {
        guard let token, !token.isEmpty else {
            return .failure(StaffcastError(.unauthorized, "No token: send the header Authorization: Bearer TOKEN, or ?access_token=TOKEN."))
        }
        let digest: TokenDigest? = TokenHasher.looksValid(token) ? TokenHasher.digest(of: token) : nil
        return state.withLock { s in
            guard let digest, let identity = s.tokens.identity(for: digest, now: now) else {
                // An expired token still in the table (the ticker drops it within a second) is expired.
                let expired = digest.map { s.tokens.contains($0) } ?? false
                return .failure(TokenEnd.refusal(expired ? .expired : digest.flatMap { s.ended[$0] }))
            }
            switch s.caps.take(for: identity.userID) {
            case .serverFull(let limit)?:
                return .failure(.unavailable("This server holds its limit of \(limit) connections; try again shortly or use another server."))
            case .userFull(let limit)?:
                return .failure(StaffcastError(.rateLimited, "You already have \(limit) connections open, the most allowed; close one first."))
            case nil:
                var opens = s.recentOpens[identity.userID, default: []]
                opens.append(now)
                if opens.count > 100 { opens.removeFirst(opens.count - 100) }
                s.recentOpens[identity.userID] = opens
                s.noteUse(digest)
                return .success(Admission(identity: identity, digest: digest))
            }
        }
    }

    func release(_ admission: Admission) {
        state.withLock { $0.caps.release(for: admission.identity.userID) }
    }

    var connectionCount: Int { state.withLock { $0.caps.total } }

    /// Opens in the last hour per user (for reconnect counts in status).
    func opensLastHour(of user: UUID, now: Date = Date()) -> Int {
        state.withLock { ($0.recentOpens[user] ?? []).filter { now.timeIntervalSince($0) < 3_600 }.count }
    }

    /// Forgets opens older than an hour.
    func trimOpens(now: Date = Date()) {
        state.withLock { s in
            s.recentOpens = s.recentOpens.compactMapValues { opens in
                let kept = opens.filter { now.timeIntervalSince($0) < 3_600 }
                return kept.isEmpty ? nil : kept
            }
        }
    }
}
