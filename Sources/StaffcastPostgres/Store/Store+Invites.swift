import Foundation
import StaffcastCore

/// Invite links (docs/protocol.md, Invites): made by an event's admins and owners (as
/// themselves, under row-level security) or from the shell; redeemed by anyone holding the
/// code, which creates their profile, grants the level and issues their token in one
/// transaction. Only a code's SHA-256 is stored. Every create, redeem and revoke is audited.
extension Store {
    /// A new invite code: 16 random bytes as 22 base64url characters.
    static func newInviteCode() -> String {
        var rng = SystemRandomNumberGenerator() // getrandom(2)
        let bytes = (0..<16).map { _ in UInt8.random(in: .min ... .max, using: &rng) }
        return Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// Creates an invite as `user`, who must be an admin or owner of the event at least at the
    /// invite's level. `base` is the server's public URL, for the join URL.
    public func createInvite(as user: UUID, _ request: InviteRequest, base: String) throws -> Invite {
        try withAccess(user, request.eventID) { tx, event in
            guard event.accessLevel != .staff else {
                throw StaffcastError.forbidden("Only admins and owners of an event invite people to it.")
            }
            guard event.accessLevel.mayInvite(at: request.accessLevel) else {
                throw StaffcastError.forbidden(
                    "You are \(event.accessLevel.rawValue) on this event; an invite may not grant more (\(request.accessLevel.rawValue)).")
            }
            let invite = try insertInvite(tx, request, createdBy: user, base: base)
            try tx.execute("SET LOCAL ROLE NONE") // the audit log is the server's, not the user's
            try audit(tx, "user \(Self.id(user))", "invite_create", event: request.eventID, user: nil, detail: Self.describe(invite))
            return invite
        }
    }

    /// Creates an invite from the shell (`staffcast admin invite create`), as the server's login.
    public func createInvite(_ request: InviteRequest, base: String, actor: String = Store.defaultActor) throws -> Invite {
        try requireEvent(request.eventID)
        return try conn.transaction { tx in
            let invite = try insertInvite(tx, request, createdBy: nil, base: base)
            try audit(tx, actor, "invite_create", event: request.eventID, user: nil, detail: Self.describe(invite))
            return invite
        }
    }

    private func insertInvite(_ tx: PGConnection, _ request: InviteRequest, createdBy: UUID?, base: String) throws -> Invite {
        let code = Self.newInviteCode()
        let r = try tx.query("""
            INSERT INTO invites (code_hash, event_id, access_level, created_by, expires_at, max_uses)
            VALUES ($1, $2, $3, $4, now() + make_interval(mins => $5::int), $6)
            RETURNING \(Self.epochMicros("expires_at"))
            """, [TokenHasher.storedHash(of: code), Self.id(request.eventID), request.accessLevel.rawValue,
                  createdBy.map(Self.id), String(request.expiresInMinutes), String(request.maxUses)])
        guard let expires = r.date(0, 0) else { throw PostgresError(.unexpectedResult, "an invites row could not be read") }
        return Invite(code: code, url: InviteURL.make(base: base, code: code), eventID: request.eventID,
                      accessLevel: request.accessLevel, expiresAt: expires, maxUses: request.maxUses, uses: 0)
    }

    private static func describe(_ invite: Invite) -> String {
        "\(invite.accessLevel.rawValue), \(invite.maxUses) use\(invite.maxUses == 1 ? "" : "s"), expires \(RFC3339.format(invite.expiresAt))"
    }

    /// Revokes an invite as `user` (an admin or owner of its event); returns its event.
    /// Revoking a revoked invite again is fine; an unknown code, or one of an event the user
    /// does not run, is not_found.
    @discardableResult
    public func revokeInvite(as user: UUID, code: String) throws -> UUID {
        guard InviteURL.looksLikeCode(code) else { throw StaffcastError.notFound("There is no such invite.") }
        return try conn.transaction(asUser: user) { tx in
            // Row-level security shows only invites of events the user administers.
            let r = try tx.query("SELECT event_id, revoked_at IS NOT NULL FROM invites WHERE code_hash = $1 FOR UPDATE",
                                 [TokenHasher.storedHash(of: code)])
            guard r.rowCount == 1, let event = r.uuid(0, 0) else {
                throw StaffcastError.notFound("There is no such invite among the events you run.")
            }
            if r.bool(0, 1) == true { return event }
            try tx.query("UPDATE invites SET revoked_at = now() WHERE code_hash = $1", [TokenHasher.storedHash(of: code)])
            try tx.execute("SET LOCAL ROLE NONE")
            try audit(tx, "user \(Self.id(user))", "invite_revoke", event: event, user: nil, detail: nil)
            return event
        }
    }

    /// Revokes an invite from the shell; returns its event, nil when the code is unknown.
    @discardableResult
    public func revokeInvite(code: String, actor: String = Store.defaultActor) throws -> UUID? {
        guard InviteURL.looksLikeCode(code) else { return nil }
        return try conn.transaction { tx in
            let r = try tx.query("UPDATE invites SET revoked_at = coalesce(revoked_at, now()) WHERE code_hash = $1 RETURNING event_id",
                                 [TokenHasher.storedHash(of: code)])
            guard r.rowCount == 1, let event = r.uuid(0, 0) else { return nil }
            try audit(tx, actor, "invite_revoke", event: event, user: nil, detail: nil)
            return event
        }
    }

    /// Redeems an invite: in one transaction, takes one use (the row is locked, so two people
    /// never take the last use), creates the profile, grants the level and issues a token.
    /// Unknown code: not_found; expired, used up or revoked: gone.
    public func redeemInvite(code: String, displayName: String) throws -> Redemption {
        let name = try Self.validName(displayName, what: "display name")
        try TextRules.requireStorable(name, field: "display_name")
        guard InviteURL.looksLikeCode(code) else {
            throw StaffcastError.notFound("There is no such invite; check the link (it is /join/ and 22 characters).")
        }
        return try conn.transaction { tx in
            let r = try tx.query("""
                SELECT event_id, access_level, revoked_at IS NOT NULL, expires_at <= now(), uses >= max_uses
                FROM invites WHERE code_hash = $1 FOR UPDATE
                """, [TokenHasher.storedHash(of: code)])
            guard r.rowCount == 1, let event = r.uuid(0, 0), let level = r.string(0, 1).flatMap(AccessLevel.init) else {
                throw StaffcastError.notFound("There is no such invite; check the link.")
            }
            if r.bool(0, 2) == true { throw StaffcastError(.gone, "This invite was revoked; ask the organiser for a new one.") }
            if r.bool(0, 3) == true { throw StaffcastError(.gone, "This invite has expired; ask the organiser for a new one.") }
            if r.bool(0, 4) == true { throw StaffcastError(.gone, "This invite has been used up; ask the organiser for a new one.") }
            try tx.query("UPDATE invites SET uses = uses + 1 WHERE code_hash = $1", [TokenHasher.storedHash(of: code)])
            let user = UUID()
            try tx.query("INSERT INTO profiles (id, display_name) VALUES ($1, $2)", [Self.id(user), name])
            try tx.query("INSERT INTO event_access (event_id, user_id, access_level) VALUES ($1, $2, $3)",
                         [Self.id(event), Self.id(user), level.rawValue])
            let (token, _) = try insertToken(tx, user: user, label: "invite", expiresIn: nil)
            try audit(tx, "invite", "invite_redeem", event: event, user: user, detail: level.rawValue)
            return Redemption(userID: user, token: token, eventID: event, accessLevel: level)
        }
    }

    /// Deletes invites that expired more than `grace` seconds ago (until then a redeem is
    /// told `gone` rather than "no such invite"); returns how many.
    @discardableResult
    public func deleteStaleInvites(grace: TimeInterval = 86_400) throws -> Int {
        try conn.query("DELETE FROM invites WHERE expires_at < now() - make_interval(secs => $1::float8)",
                       [String(grace)]).affectedRows
    }
}
