import Foundation
import StaffcastCore

/// API tokens: issued, listed and revoked from the shell (`staffcast admin token …`, as the
/// server's own login, audited), and loaded by servers into memory (`validTokens`, then
/// followed through `changes(after:)`). Only a token's SHA-256 is ever stored or shown.
extension Store {
    /// SQL: the token row `alias` is neither revoked nor expired.
    static func tokenIsValid(_ alias: String) -> String {
        "(\(alias).revoked_at IS NULL AND (\(alias).expires_at IS NULL OR \(alias).expires_at > now()))"
    }

    /// Issues a new token for `user` and returns it; only its hash is stored. With
    /// `expiresIn` (seconds, > 0) the token stops working that long from now (database clock).
    public func issueToken(user: UUID, label: String? = nil, expiresIn: TimeInterval? = nil,
                           actor: String = Store.defaultActor) throws -> String {
        if let expiresIn, !(expiresIn.isFinite && expiresIn > 0) {
            throw StaffcastError.invalid("A token's lifetime must be more than zero seconds.")
        }
        try requireUser(user)
        return try conn.transaction { tx in
            let (token, expiry) = try insertToken(tx, user: user, label: label, expiresIn: expiresIn)
            let detail = [label, expiry.map { "expires " + RFC3339.format($0) }].compactMap { $0 }.joined(separator: "; ")
            try audit(tx, actor, "token_issue", event: nil, user: user, detail: detail.isEmpty ? nil : detail)
            return token
        }
    }

    /// Inserts a new token for `user` in `tx` and returns it with its expiry. Every token is
    /// made here (`admin token issue`, redeeming an invite): its row's trigger writes the
    /// `token_changes` entry that every server's in-memory table follows.
    func insertToken(_ tx: PGConnection, user: UUID, label: String?, expiresIn: TimeInterval?) throws -> (String, Date?) {
        let token = TokenHasher.generate()
        let r = try tx.query("""
            INSERT INTO api_tokens (token_hash, user_id, label, expires_at)
            VALUES ($1, $2, $3, now() + make_interval(secs => $4::float8))
            RETURNING \(Self.epochMicros("expires_at"))
            """, [TokenHasher.storedHash(of: token), Self.id(user), label, expiresIn.map { String($0) }])
        return (token, r.date(0, 0))
    }

    /// The user a token belongs to, or nil for an unknown, revoked or expired token.
    public func authenticate(token: String) throws -> Identity? {
        guard TokenHasher.looksValid(token) else { return nil }
        let r = try conn.query("""
            SELECT p.id, p.display_name FROM api_tokens t JOIN profiles p ON p.id = t.user_id
            WHERE t.token_hash = $1 AND \(Self.tokenIsValid("t"))
            """, [TokenHasher.storedHash(of: token)])
        guard r.rowCount == 1, let id = r.uuid(0, 0) else { return nil }
        return Identity(userID: id, displayName: r.string(0, 1) ?? "")
    }

    /// Every token that is neither revoked nor expired, and the token log's highest seq, read
    /// from one snapshot: a server loads these, then follows `changes(after:)` from
    /// `ChangeCursors(token: through)` with no gap and no change applied twice.
    public func validTokens() throws -> (tokens: [TokenRecord], through: Int64) {
        try conn.transaction("REPEATABLE READ READ ONLY") { tx in
            let through = try tx.query("SELECT coalesce(max(seq), 0) FROM token_changes").int64(0, 0) ?? 0
            let r = try tx.query("""
                SELECT encode(t.token_hash, 'hex'), p.id, p.display_name, \(Self.epochMicros("t.expires_at"))
                FROM api_tokens t JOIN profiles p ON p.id = t.user_id
                WHERE \(Self.tokenIsValid("t"))
                """)
            var tokens: [TokenRecord] = []
            tokens.reserveCapacity(r.rowCount)
            for i in 0..<r.rowCount {
                guard let digest = r.string(i, 0).flatMap(TokenDigest.init(hex:)), let user = r.uuid(i, 1) else {
                    throw PostgresError(.unexpectedResult, "an api_tokens row could not be read")
                }
                tokens.append(TokenRecord(digest: digest, identity: Identity(userID: user, displayName: r.string(i, 2) ?? ""),
                                          expiresAt: r.date(i, 3)))
            }
            return (tokens, through)
        }
    }

    /// Tokens that expired or were revoked in the last 30 days (at most `limit`), so a server
    /// can say "expired" or "revoked" instead of "not valid" when one is used.
    public func endedTokens(limit: Int = 100_000) throws -> [(TokenDigest, TokenEnd)] {
        let r = try conn.query("""
            SELECT encode(token_hash, 'hex'), revoked_at IS NOT NULL FROM api_tokens
            WHERE revoked_at > now() - interval '30 days'
               OR (revoked_at IS NULL AND expires_at <= now() AND expires_at > now() - interval '30 days')
            ORDER BY coalesce(revoked_at, expires_at) DESC LIMIT $1
            """, [String(limit)])
        return (0..<r.rowCount).compactMap { i in
            r.string(i, 0).flatMap(TokenDigest.init(hex:)).map { ($0, r.bool(i, 1) == true ? .revoked : .expired) }
        }
    }

    /// One token looked up by its digest (a server that does not know it yet), with the token
    /// log's highest seq, from one statement's snapshot: the record while it is valid, else nil.
    /// `Gatekeeper.learn` uses `through` to keep a revoke already applied from being undone.
    public func lookupToken(_ digest: TokenDigest) throws -> (record: TokenRecord?, through: Int64) {
        let r = try conn.query("""
            SELECT (SELECT coalesce(max(seq), 0) FROM token_changes), p.id, p.display_name, \(Self.epochMicros("t.expires_at"))
            FROM (SELECT 1) AS one
            LEFT JOIN (api_tokens t JOIN profiles p ON p.id = t.user_id)
                   ON t.token_hash = $1 AND \(Self.tokenIsValid("t"))
            """, [TokenHasher.byteaText(digest)])
        guard r.rowCount == 1, let through = r.int64(0, 0) else {
            throw PostgresError(.unexpectedResult, "the token lookup returned \(r.rowCount) rows")
        }
        guard let user = r.uuid(0, 1) else { return (nil, through) }
        return (TokenRecord(digest: digest, identity: Identity(userID: user, displayName: r.string(0, 2) ?? ""),
                            expiresAt: r.date(0, 3)), through)
    }

    /// Records that these tokens were used just now (shown by `staffcast admin token list`).
    /// Writes no change-log row; meant to be called now and then with the tokens a server
    /// saw since the last call, not once per request.
    public func recordTokenUse(_ digests: some Collection<TokenDigest>) throws {
        guard !digests.isEmpty else { return }
        let list = "{" + digests.map(\.hex).joined(separator: ",") + "}"
        try conn.query("""
            UPDATE api_tokens SET last_used_at = now()
            WHERE token_hash IN (SELECT decode(h, 'hex') FROM unnest($1::text[]) AS h)
            """, [list])
    }

    /// What `staffcast admin token list` shows of one token: never the token or its hash.
    public struct TokenSummary: Sendable, Equatable, Encodable {
        public enum State: String, Sendable, Encodable { case active, expired, revoked }

        /// Names the token over HTTP (`DELETE /v1/users/{user_id}/tokens/{token_id}`).
        public var id: UUID
        public var userID: UUID
        public var label: String?
        public var createdAt: Date
        public var lastUsedAt: Date?
        public var expiresAt: Date?
        public var revokedAt: Date?
        /// As the database saw it when listing.
        public var state: State

        enum CodingKeys: String, CodingKey {
            case id, userID = "user_id", label, createdAt = "created_at", lastUsedAt = "last_used_at",
                 expiresAt = "expires_at", revokedAt = "revoked_at", state
        }

        public func encode(to encoder: Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(Store.id(id), forKey: .id)
            try c.encode(Store.id(userID), forKey: .userID)
            try c.encode(label, forKey: .label)
            try c.encode(RFC3339.format(createdAt), forKey: .createdAt)
            try c.encode(lastUsedAt.map(RFC3339.format), forKey: .lastUsedAt)
            try c.encode(expiresAt.map(RFC3339.format), forKey: .expiresAt)
            try c.encode(revokedAt.map(RFC3339.format), forKey: .revokedAt)
            try c.encode(state, forKey: .state)
        }
    }

    /// Every token of `user`, revoked and expired ones too, oldest first.
    public func tokens(ofUser user: UUID) throws -> [TokenSummary] {
        try requireUser(user)
        let r = try conn.query("SELECT \(Self.tokenSummaryColumns) FROM api_tokens WHERE user_id = $1 ORDER BY created_at, id",
                               [Self.id(user)])
        return try Self.tokenSummaries(r, user: user, unreadable: "an api_tokens row could not be read")
    }

    /// The columns `tokenSummaries` reads, of api_tokens or of staffcast_user_tokens().
    static let tokenSummaryColumns = """
        id, label, \(epochMicros("created_at")), \(epochMicros("last_used_at")), \(epochMicros("expires_at")),
        \(epochMicros("revoked_at")), revoked_at IS NOT NULL, expires_at IS NOT NULL AND expires_at <= now()
        """

    /// `user`'s tokens from rows of `tokenSummaryColumns`; `unreadable` says what a row without
    /// an id or a creation time was.
    static func tokenSummaries(_ r: PGResult, user: UUID, unreadable: String) throws -> [TokenSummary] {
        try (0..<r.rowCount).map { i in
            guard let id = r.uuid(i, 0), let created = r.date(i, 2) else {
                throw PostgresError(.unexpectedResult, unreadable)
            }
            let state: TokenSummary.State = r.bool(i, 6) == true ? .revoked : r.bool(i, 7) == true ? .expired : .active
            return TokenSummary(id: id, userID: user, label: r.string(i, 1), createdAt: created, lastUsedAt: r.date(i, 3),
                                expiresAt: r.date(i, 4), revokedAt: r.date(i, 5), state: state)
        }
    }

    /// Revokes every token of `user` not yet revoked (expired ones included); returns how
    /// many. Recorded in the audit log when there was any.
    @discardableResult
    public func revokeTokens(user: UUID, actor: String = Store.defaultActor) throws -> Int {
        try requireUser(user)
        return try conn.transaction { tx in
            let count = try tx.query("UPDATE api_tokens SET revoked_at = now() WHERE user_id = $1 AND revoked_at IS NULL",
                                     [Self.id(user)]).affectedRows
            if count > 0 {
                try audit(tx, actor, "token_revoke", event: nil, user: user,
                          detail: count == 1 ? "all tokens (1)" : "all tokens (\(count))")
            }
            return count
        }
    }

    /// Revokes one token; returns the user it belonged to, or nil when it is unknown or was
    /// already revoked. Recorded in the audit log (by label, never the token).
    @discardableResult
    public func revokeToken(_ token: String, actor: String = Store.defaultActor) throws -> UUID? {
        guard TokenHasher.looksValid(token) else {
            throw StaffcastError.invalid("That is not a staffcast token (sc_ and 43 more characters).")
        }
        return try conn.transaction { tx in
            let r = try tx.query("""
                UPDATE api_tokens SET revoked_at = now() WHERE token_hash = $1 AND revoked_at IS NULL
                RETURNING user_id, label
                """, [TokenHasher.storedHash(of: token)])
            guard r.rowCount == 1, let user = r.uuid(0, 0) else { return nil }
            try audit(tx, actor, "token_revoke", event: nil, user: user,
                      detail: r.string(0, 1).map { "one token: \($0)" } ?? "one token")
            return user
        }
    }
}
