import Foundation
import StaffcastCore

/// What ops pages need from the database, as the server's own login.
extension Store {
    /// One member of an event's roster with what the database knows of them.
    public struct RosterEntry: Sendable, Equatable {
        public var userID: UUID
        public var displayName: String
        public var level: AccessLevel
        public var unreadCount: Int
        /// The newest message of the event they have read, if any.
        public var lastReadSeq: Int64?
        public var lastReadSentAt: Date?
    }

    /// The roster of `event`. With `asUser`, only for an admin or owner of it.
    public func roster(event: UUID, asUser user: UUID?) throws -> [RosterEntry] {
        try requireRosterAccess(event, asUser: user)
        return try rosterEntries(event: event, only: nil)
    }

    /// One member of an event's roster, without what the database knows of them: cheap for the
    /// whole roster (the unread counts are the cost at 10,000 staff).
    public struct RosterMember: Sendable, Equatable {
        public var userID: UUID
        public var displayName: String
        public var level: AccessLevel
    }

    /// Everyone on the roster of `event`, by name. With `asUser`, only for an admin or owner of it.
    public func rosterMembers(event: UUID, asUser user: UUID?) throws -> [RosterMember] {
        try requireRosterAccess(event, asUser: user)
        let r = try conn.query("""
            SELECT a.user_id, p.display_name, a.access_level
            FROM event_access a JOIN profiles p ON p.id = a.user_id
            WHERE a.event_id = $1 ORDER BY p.display_name, a.user_id
            """, [Self.id(event)])
        return (0..<r.rowCount).compactMap { i in
            guard let id = r.uuid(i, 0), let level = r.string(i, 2).flatMap(AccessLevel.init) else { return nil }
            return RosterMember(userID: id, displayName: r.string(i, 1) ?? "", level: level)
        }
    }

    /// The roster entries (unread, last read) of `users` only, once `rosterMembers` has checked
    /// the caller's access: a page of the status costs its own people, not the whole roster.
    public func rosterEntries(event: UUID, users: [UUID]) throws -> [RosterEntry] {
        users.isEmpty ? [] : try rosterEntries(event: event, only: users)
    }

    private func requireRosterAccess(_ event: UUID, asUser user: UUID?) throws {
        if let user {
            try withAdminAccess(user, event, refusal: "Only admins and owners of the event may see who is connected.") { _ in }
        } else {
            try requireEvent(event)
        }
    }

    /// `only` nil: the whole roster.
    private func rosterEntries(event: UUID, only users: [UUID]?) throws -> [RosterEntry] {
        let r = try conn.query("""
            SELECT a.user_id, p.display_name, a.access_level,
                   staffcast_unread_count(a.user_id, a.event_id),
                   last.seq, \(Self.epochMicros("last.sent_at"))
            FROM event_access a JOIN profiles p ON p.id = a.user_id
            LEFT JOIN LATERAL (SELECT m.seq, m.sent_at FROM message_reads r JOIN staff_messages m ON m.id = r.message_id
                               WHERE r.user_id = a.user_id AND r.event_id = a.event_id
                               ORDER BY m.seq DESC LIMIT 1) last ON true
            WHERE a.event_id = $1\(users == nil ? "" : " AND a.user_id = ANY ($2::uuid[])") ORDER BY p.display_name, a.user_id
            """, [Self.id(event)] + (users.map { ["{" + $0.map(Self.id).joined(separator: ",") + "}"] } ?? []))
        return (0..<r.rowCount).compactMap { i in
            guard let id = r.uuid(i, 0), let level = r.string(i, 2).flatMap(AccessLevel.init) else { return nil }
            return RosterEntry(userID: id, displayName: r.string(i, 1) ?? "", level: level, unreadCount: r.int(i, 3) ?? 0,
                               lastReadSeq: r.int64(i, 4), lastReadSentAt: r.date(i, 5))
        }
    }

    /// Per event: roster size and the newest unexpired message.
    public struct EventFacts: Sendable, Equatable {
        public var eventID: UUID
        public var name: String
        public var roster: Int
        public var lastMessageSeq: Int64?
        public var lastMessageAt: Date?
    }

    public func eventFacts(_ events: [UUID]) throws -> [EventFacts] {
        guard !events.isEmpty else { return [] }
        let list = "{" + events.map(Self.id).joined(separator: ",") + "}"
        let r = try conn.query("""
            SELECT e.id, e.name, (SELECT count(*) FROM event_access a WHERE a.event_id = e.id),
                   last.seq, \(Self.epochMicros("last.sent_at"))
            FROM events e
            LEFT JOIN LATERAL (SELECT m.seq, m.sent_at FROM staff_messages m WHERE m.event_id = e.id
                               ORDER BY m.seq DESC LIMIT 1) last ON true
            WHERE e.id = ANY ($1::uuid[])
            """, [list])
        return (0..<r.rowCount).compactMap { i in
            guard let id = r.uuid(i, 0) else { return nil }
            return EventFacts(eventID: id, name: r.string(i, 1) ?? "", roster: r.int(i, 2) ?? 0,
                              lastMessageSeq: r.int64(i, 3), lastMessageAt: r.date(i, 4))
        }
    }

    /// One round trip, for the database latency shown in status.
    public func ping() throws -> TimeInterval {
        let start = Date()
        try conn.query("SELECT 1")
        return Date().timeIntervalSince(start)
    }
}
