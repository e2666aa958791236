import Foundation
import StaffcastCore

/// Token lifecycle over HTTP (`GET`/`DELETE /v1/users/{user_id}/tokens[/{token_id}]`) and
/// deleting a user. Over HTTP the caller is a user (run as them, under row-level security) or
/// the ops token (`caller` nil, as the server's login); who may manage whose tokens is decided
/// and audited in the database (sql/006_roles.sql: staffcast_may_manage_tokens,
/// staffcast_user_tokens, staffcast_revoke_user_tokens). A user the caller may not manage is
/// answered exactly as one that does not exist.
extension Store {
    /// Runs `body` as `caller`, or as the server's own login for the ops token.
    private func asCaller<T>(_ caller: UUID?, _ body: (PGConnection) throws -> T) throws -> T {
        if let caller { return try conn.transaction(asUser: caller, "READ COMMITTED", body) }
        return try conn.transaction("READ COMMITTED", body)
    }

    /// Every token of `user` (revoked and expired ones too), oldest first, never the token or
    /// its digest. Throws `noSuchUser` when `caller` may not manage them.
    public func tokens(ofUser user: UUID, managedBy caller: UUID?) throws -> [TokenSummary] {
        try asCaller(caller) { tx in
            guard try tx.query("SELECT staffcast_may_manage_tokens($1)", [Self.id(user)]).bool(0, 0) == true else {
                throw StaffcastError.noSuchUser(user)
            }
            let r = try tx.query("SELECT \(Self.tokenSummaryColumns) FROM staffcast_user_tokens($1)", [Self.id(user)])
            return try Self.tokenSummaries(r, user: user, unreadable: "a token row could not be read")
        }
    }

    /// Revokes one token of `user` (`token`) or all of them (nil); returns how many were
    /// revoked (0 when already revoked). Audited in the same transaction. Throws `noSuchUser`
    /// when `caller` may not manage `user`'s tokens, not_found when `user` has no such token,
    /// forbidden when `user` also works on an event `caller` does not own (sql/016: their
    /// tokens open that event too).
    public func revokeTokens(ofUser user: UUID, token: UUID?, managedBy caller: UUID?) throws -> Int {
        try asCaller(caller) { tx in
            if try tx.query("SELECT staffcast_may_manage_tokens($1)", [Self.id(user)]).bool(0, 0) == true,
               try tx.query("SELECT staffcast_tokens_open_other_owners_events($1)", [Self.id(user)]).bool(0, 0) == true {
                throw StaffcastError.forbidden(
                    "This person also works on events you do not own, and their tokens open those too: revoking them would lock them out there. "
                    + "End their access to your event instead (staffcast admin revoke --event EVENT --user \(Self.id(user))), or ask the server's operators.")
            }
            let r = try tx.query("SELECT staffcast_revoke_user_tokens($1, $2)", [Self.id(user), token.map(Self.id)])
            guard let n = r.int(0, 0) else { throw StaffcastError.noSuchUser(user) }
            if n < 0, let token {
                throw StaffcastError.notFound("User \(Self.id(user)) has no token \(Self.id(token)).")
            }
            return n
        }
    }

    /// What deleting a user did.
    public struct DeletedUser: Sendable, Equatable {
        public var tokens: Int
        public var events: Int
        /// The profile row stays (marked deleted) because messages, notifications, scheduled
        /// sends or templates they made name them; otherwise it is gone.
        public var keptAsSender: Bool
        /// Their scheduled sends that had not gone out: cancelled, with a note saying why.
        public var scheduledCancelled: Int = 0
    }

    /// Deletes `user` (from the shell, as the owner, audited): their tokens (every server closes
    /// their WebSockets with 4401 within 2 s) and access (live subscriptions end), their
    /// notifications and presence, their pending scheduled sends (cancelled), and the profile
    /// itself — or, when messages, scheduled sends or templates they made still name them, the
    /// profile is kept for history and marked deleted (no token can be issued and no access
    /// granted to it again).
    public func deleteUser(_ user: UUID, actor: String = Store.defaultActor) throws -> DeletedUser {
        try requireUser(user)
        return try conn.transaction { tx in
            let id = Self.id(user)
            // The gate first (sql/014): its token and access deletes take it anyway, and taken
            // after the profile's row lock it would deadlock with a send batch that holds the
            // gate shared and waits for that row (the foreign-key check of a message by this user).
            try tx.query("SELECT pg_advisory_xact_lock(\(Self.accessTokenGate.0), \(Self.accessTokenGate.1))")
            guard try tx.query("SELECT 1 FROM profiles WHERE id = $1 AND deleted_at IS NULL FOR UPDATE", [id]).rowCount == 1 else {
                throw StaffcastError.notFound("There is no user \(id).")
            }
            let tokens = try tx.query("DELETE FROM api_tokens WHERE user_id = $1", [id]).affectedRows
            let events = try tx.query("DELETE FROM event_access WHERE user_id = $1", [id]).affectedRows
            try tx.query("DELETE FROM notifications WHERE user_id = $1", [id])
            try tx.query("DELETE FROM presence WHERE user_id = $1", [id])
            // What they scheduled does not go out in their name after they are gone.
            let cancelled = try tx.query("""
                UPDATE scheduled_messages SET status = 'cancelled', done_at = now(), note = 'the sender was deleted'
                WHERE sender_id = $1 AND status = 'pending'
                """, [id]).affectedRows
            // Every row that names them without ON DELETE keeps the profile (the attack round
            // found a template's or a scheduled send's maker could not be deleted at all).
            let sender = try tx.query("""
                SELECT EXISTS (SELECT 1 FROM staff_messages WHERE sender_id = $1)
                    OR EXISTS (SELECT 1 FROM notifications WHERE sender_id = $1)
                    OR EXISTS (SELECT 1 FROM scheduled_messages WHERE sender_id = $1)
                    OR EXISTS (SELECT 1 FROM message_templates WHERE created_by = $1)
                """, [id]).bool(0, 0) ?? true
            if sender {
                try tx.query("UPDATE profiles SET deleted_at = now() WHERE id = $1", [id])
            } else {
                try tx.query("DELETE FROM profiles WHERE id = $1", [id])
            }
            try audit(tx, actor, "user_delete", event: nil, user: user,
                      detail: "\(tokens) token(s), \(events) event(s)\(cancelled > 0 ? ", \(cancelled) scheduled send(s) cancelled" : "")"
                        + (sender ? "; profile kept as a sender" : ""))
            return DeletedUser(tokens: tokens, events: events, keptAsSender: sender, scheduledCancelled: cancelled)
        }
    }
}
