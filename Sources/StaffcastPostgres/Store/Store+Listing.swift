import Foundation
import StaffcastCore

/// What `staffcast admin event list|set`, `admin user list` and `admin token revoke --id` need:
/// listing and changing set-up from the shell, as the tables' owner (like the rest of `admin`).
extension Store {
    /// One event as `admin event list` shows it.
    public struct EventRow: Sendable, Equatable, Encodable {
        public var id: UUID
        public var name: String
        public var startsAt: Date?
        public var createdAt: Date
        /// People with access, by level.
        public var owners: Int, admins: Int, staff: Int

        enum CodingKeys: String, CodingKey {
            case id, name, startsAt = "starts_at", createdAt = "created_at", owners, admins, staff
        }

        public func encode(to encoder: Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(id.wireText, forKey: .id)
            try c.encode(name, forKey: .name)
            try c.encode(startsAt.map(RFC3339.format), forKey: .startsAt)
            try c.encode(RFC3339.format(createdAt), forKey: .createdAt)
            try c.encode(owners, forKey: .owners)
            try c.encode(admins, forKey: .admins)
            try c.encode(staff, forKey: .staff)
        }
    }

    /// One user as `admin user list` shows it (deleted users are left out).
    public struct UserRow: Sendable, Equatable, Encodable {
        public var id: UUID
        public var name: String
        public var createdAt: Date
        /// Events they have access to, and their tokens that still work.
        public var events: Int, activeTokens: Int

        enum CodingKeys: String, CodingKey {
            case id, name = "display_name", createdAt = "created_at", events, activeTokens = "active_tokens"
        }

        public func encode(to encoder: Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(id.wireText, forKey: .id)
            try c.encode(name, forKey: .name)
            try c.encode(RFC3339.format(createdAt), forKey: .createdAt)
            try c.encode(events, forKey: .events)
            try c.encode(activeTokens, forKey: .activeTokens)
        }
    }

    /// Every event, the soonest start first (those without a start last, newest first).
    public func events() throws -> [EventRow] {
        let r = try conn.query("""
            SELECT e.id, e.name, \(Self.epochMicros("e.starts_at")), \(Self.epochMicros("e.created_at")),
                   count(*) FILTER (WHERE a.access_level = 'owner'), count(*) FILTER (WHERE a.access_level = 'admin'),
                   count(*) FILTER (WHERE a.access_level = 'staff')
            FROM events e LEFT JOIN event_access a ON a.event_id = e.id
            GROUP BY e.id ORDER BY e.starts_at NULLS LAST, e.created_at DESC
            """)
        return try (0..<r.rowCount).map { i in
            guard let id = r.uuid(i, 0), let name = r.string(i, 1), let created = r.date(i, 3) else {
                throw PostgresError(.unexpectedResult, "an event row could not be read")
            }
            return EventRow(id: id, name: name, startsAt: r.date(i, 2), createdAt: created,
                            owners: r.int(i, 4) ?? 0, admins: r.int(i, 5) ?? 0, staff: r.int(i, 6) ?? 0)
        }
    }

    /// Every user not deleted, by name; with `event`, only those with access to it.
    public func users(event: UUID? = nil) throws -> [UserRow] {
        if let event { try requireEvent(event) }
        let r = try conn.query("""
            SELECT p.id, p.display_name, \(Self.epochMicros("p.created_at")),
                   (SELECT count(*) FROM event_access a WHERE a.user_id = p.id),
                   (SELECT count(*) FROM api_tokens t WHERE t.user_id = p.id AND t.revoked_at IS NULL
                        AND (t.expires_at IS NULL OR t.expires_at > now()))
            FROM profiles p
            WHERE p.deleted_at IS NULL
              AND ($1::uuid IS NULL OR EXISTS (SELECT 1 FROM event_access a WHERE a.user_id = p.id AND a.event_id = $1::uuid))
            ORDER BY p.display_name, p.id
            """, [event.map(Self.id)])
        return try (0..<r.rowCount).map { i in
            guard let id = r.uuid(i, 0), let name = r.string(i, 1), let created = r.date(i, 2) else {
                throw PostgresError(.unexpectedResult, "a user row could not be read")
            }
            return UserRow(id: id, name: name, createdAt: created, events: r.int(i, 3) ?? 0, activeTokens: r.int(i, 4) ?? 0)
        }
    }

    /// How many sends of `event` are still waiting for their time. A `--before-start` time is
    /// fixed when it is scheduled, so moving the start leaves them where they were.
    public func pendingScheduledCount(event: UUID) throws -> Int {
        try conn.query("SELECT count(*) FROM scheduled_messages WHERE event_id = $1 AND status = 'pending'",
                       [Self.id(event)]).int(0, 0) ?? 0
    }

    /// Changes an event's name and/or start (nil leaves it; `clearStart` removes the start).
    /// Throws not_found for an unknown event.
    public func updateEvent(_ event: UUID, name: String?, startsAt: Date?, clearStart: Bool = false) throws {
        let name = try name.map { try Self.validName($0, what: "event name") }
        let r = try conn.query("""
            UPDATE events SET name = coalesce($2, name),
                              starts_at = CASE WHEN $4::boolean THEN NULL ELSE coalesce($3::timestamptz, starts_at) END
            WHERE id = $1
            """, [Self.id(event), name, startsAt.map(RFC3339.format), clearStart ? "true" : "false"])
        if r.affectedRows == 0 { throw StaffcastError.notFound("There is no event \(Self.id(event)).") }
    }

    /// Revokes the token with this id (as `admin token list` shows it); returns its user, or nil
    /// when it was already revoked. Audited. Throws not_found for an unknown id.
    @discardableResult
    public func revokeToken(id: UUID, actor: String = Store.defaultActor) throws -> UUID? {
        try conn.transaction { tx in
            let owner = try tx.query("SELECT user_id FROM api_tokens WHERE id = $1", [Self.id(id)])
            guard owner.rowCount == 1, let user = owner.uuid(0, 0) else {
                throw StaffcastError.notFound("There is no token with id \(Self.id(id)) (see `staffcast admin token list --user ID`).")
            }
            let r = try tx.query("""
                UPDATE api_tokens SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL RETURNING label
                """, [Self.id(id)])
            guard r.rowCount == 1 else { return nil }
            try audit(tx, actor, "token_revoke", event: nil, user: user,
                      detail: "one token: \(Self.id(id))\(r.string(0, 0).map { " (\($0))" } ?? "")")
            return user
        }
    }
}
