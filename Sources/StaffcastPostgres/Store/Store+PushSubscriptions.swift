import Foundation
import StaffcastCore

/// Web Push subscriptions (sql/012_reach.sql), as their user under row-level security: a user
/// adds and removes only their own.
extension Store {
    /// Stores a browser's subscription for `user` (the same endpoint again replaces its keys);
    /// returns its id. Keeps at most `keep` of the user's subscriptions, this one always: past
    /// it the oldest go (a phone that subscribes anew after a reinstall keeps working; one
    /// person cannot pile up endpoints for the delivery threads). The subscription belongs to
    /// `token`, the one the request came with (sql/019): revoking it ends the subscription.
    public func addPushSubscription(as user: UUID, token: TokenDigest?, _ request: PushSubscriptionRequest, keep: Int = 10) throws -> UUID {
        try conn.transaction(asUser: user) { tx in
            // One add per user at a time, so parallel adds cannot leave more than `keep`.
            try tx.query("SELECT pg_advisory_xact_lock(\(Self.pushSubscriptionsLock), hashtext($1))", [Self.id(user)])
            let r = try tx.query("""
                INSERT INTO push_subscriptions (user_id, endpoint, p256dh, auth, token_hash) VALUES ($1, $2, $3, $4, $5::bytea)
                ON CONFLICT (user_id, endpoint) DO UPDATE
                    SET p256dh = excluded.p256dh, auth = excluded.auth, token_hash = excluded.token_hash
                RETURNING id
                """, [Self.id(user), request.endpoint, request.p256dh, request.auth, token.map(TokenHasher.byteaText)])
            guard let id = r.uuid(0, 0) else { throw PostgresError(.unexpectedResult, "the subscription was not returned") }
            try tx.query("""
                DELETE FROM push_subscriptions WHERE id IN (
                    SELECT id FROM push_subscriptions WHERE user_id = $1 AND id <> $2
                    ORDER BY created_at DESC, id OFFSET $3)
                """, [Self.id(user), Self.id(id), String(max(0, keep - 1))])
            return id
        }
    }

    /// The advisory lock class of adding push subscriptions (the user's hash is the other key).
    static let pushSubscriptionsLock = 7_354_012

    /// Removes one of `user`'s subscriptions; not_found when they have none with that id.
    public func deletePushSubscription(as user: UUID, id: UUID) throws {
        try conn.transaction(asUser: user) { tx in
            let r = try tx.query("DELETE FROM push_subscriptions WHERE id = $1 AND user_id = $2 RETURNING id", [Self.id(id), Self.id(user)])
            guard r.rowCount == 1 else {
                throw StaffcastError.notFound("You have no push subscription \(Self.id(id)).")
            }
        }
    }

    /// The subscriptions `token` registered for `user`, oldest first, as the user (row-level
    /// security): whether Web Push still reaches the device that signed in with it (a push
    /// service's 404 or 410, a revoke or an expiry removes them).
    public func pushSubscriptions(as user: UUID, token: TokenDigest?) throws -> [UUID] {
        guard let token else { return [] }
        return try conn.transaction(asUser: user) { tx in
            let r = try tx.query("""
                SELECT id FROM push_subscriptions WHERE user_id = $1 AND token_hash = $2::bytea ORDER BY created_at, id
                """, [Self.id(user), TokenHasher.byteaText(token)])
            return (0..<r.rowCount).compactMap { r.uuid($0, 0) }
        }
    }

    /// The subscriptions of `user` (server login; tests and ops).
    public func pushSubscriptionIDs(user: UUID) throws -> [UUID] {
        let r = try conn.query("SELECT id FROM push_subscriptions WHERE user_id = $1 ORDER BY created_at", [Self.id(user)])
        return (0..<r.rowCount).compactMap { r.uuid($0, 0) }
    }
}
