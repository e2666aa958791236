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
            // Audited by the table's trigger (sql/009_invites.sql), as this user.
            return try insertInvite(tx, request, createdBy: user, base: base)
        }
    }

    /// Creates an invite from the shell (`staffcast admin invite create`), as the server's login.
    public func createInvite(_ request: InviteRequest, base: String, actor: String = Store.defaultActor) throws -> Invite {
        try requireEvent(request.eventID)
        return try conn.transaction { tx in
            try tx.query("SELECT set_config('staffcast.actor', $1, true)", [actor]) // for the audit trigger
            return try insertInvite(tx, request, createdBy: nil, base: base)
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
            // Audited by the table's trigger.
            try tx.query("UPDATE invites SET revoked_at = now() WHERE code_hash = $1", [TokenHasher.storedHash(of: code)])
            return event
        }
    }

    /// Revokes an invite from the shell; returns its event, nil when the code is unknown.
    @discardableResult
    public func revokeInvite(code: String, actor: String = Store.defaultActor) throws -> UUID? {
        guard InviteURL.looksLikeCode(code) else { return nil }
        return try conn.transaction { tx in
            try tx.query("SELECT set_config('staffcast.actor', $1, true)", [actor]) // for the audit trigger
            let r = try tx.query("UPDATE invites SET revoked_at = coalesce(revoked_at, now()) WHERE code_hash = $1 RETURNING event_id",
                                 [TokenHasher.storedHash(of: code)])
            guard r.rowCount == 1, let event = r.uuid(0, 0) else { return nil }
            return event
        }
    }

    /// Redeems an invite: in one transaction, takes one use (the row is locked, so two people
    /// never take the last use), creates the profile, grants the level and issues a token
    /// (its digest goes into api_tokens like `admin token issue`'s, so every server's token
    /// table learns it from token_changes within 2 s).
    /// The invite works only while its creator could still make it (sql/018): their access on
    /// the event is read in the same transaction, after the access gate.
    /// Unknown code: not_found; expired, used up, revoked, or its creator gone or demoted: gone.
    public func redeemInvite(code: String, displayName: String) throws -> Redemption {
        let name = try Self.validName(displayName, what: "display name")
        guard InviteURL.looksLikeCode(code) else {
            throw StaffcastError.notFound("There is no such invite; check the link (it is /join/ and 22 characters).")
        }
        // One call of a SECURITY DEFINER function (sql/009_invites.sql): the server's login
        // may not write profiles, access, tokens or the audit log itself.
        let user = UUID()
        let token = TokenHasher.generate()
        let r = try conn.query("SELECT outcome, event_id, access_level FROM staffcast_redeem_invite($1, $2, $3, $4)",
                               [TokenHasher.storedHash(of: code), Self.id(user), name, TokenHasher.storedHash(of: token)])
        guard r.rowCount == 1, let outcome = r.string(0, 0) else {
            throw PostgresError(.unexpectedResult, "staffcast_redeem_invite gave no answer")
        }
        switch outcome {
        case "ok":
            guard let event = r.uuid(0, 1), let level = r.string(0, 2).flatMap(AccessLevel.init) else {
                throw PostgresError(.unexpectedResult, "staffcast_redeem_invite gave no event")
            }
            return Redemption(userID: user, token: token, eventID: event, accessLevel: level)
        case "revoked": throw StaffcastError(.gone, "This invite was revoked; ask the organiser for a new one.")
        case "expired": throw StaffcastError(.gone, "This invite has expired; ask the organiser for a new one.")
        case "used_up": throw StaffcastError(.gone, "This invite has been used up; ask the organiser for a new one.")
        case "creator_gone":
            throw StaffcastError(.gone, "The person who made this invite no longer runs this event, so it no longer works; ask the organiser for a new one.")
        case "creator_demoted":
            throw StaffcastError(.gone, "The person who made this invite no longer holds the level it grants, so it no longer works; ask the organiser for a new one.")
        default: throw StaffcastError.notFound("There is no such invite; check the link.")
        }
    }

    /// Deletes invites that expired more than `grace` seconds ago (until then a redeem is
    /// told `gone` rather than "no such invite"); returns how many.
    @discardableResult
    public func deleteStaleInvites(grace: TimeInterval = 86_400) throws -> Int {
        try conn.query("SELECT staffcast_delete_stale_invites($1)", [String(grace)]).int(0, 0) ?? 0
    }
}
