import Foundation
import StaffcastCore

/// What one user does with an event's messages. Every method runs as that user (RLS).
extension Store {
    /// The user's level on `event`; throws not_found, the same for an unknown event and for one
    /// the user has no access to (`StaffcastError.noSuchEvent`). Call inside a transaction as
    /// the user.
    func level(_ user: UUID, _ event: UUID, in tx: PGConnection) throws -> (EventSummary) {
        let r = try tx.query("""
            SELECT e.name, \(Self.epochMicros("e.starts_at")), a.access_level
            FROM event_access a JOIN events e ON e.id = a.event_id
            WHERE a.event_id = $1 AND a.user_id = $2
            """, [Self.id(event), Self.id(user)])
        guard r.rowCount == 1, let level = r.string(0, 2).flatMap(AccessLevel.init) else {
            throw StaffcastError.noSuchEvent(event)
        }
        return EventSummary(id: event, name: r.string(0, 0) ?? "", startsAt: r.date(0, 1), accessLevel: level)
    }

    /// Runs `body` as `user` after checking their access to `event` (an event they cannot see
    /// is answered as one that does not exist).
    func withAccess<T>(_ user: UUID, _ event: UUID, mode: String = "READ COMMITTED",
                       _ body: (PGConnection, EventSummary) throws -> T) throws -> T {
        try conn.transaction(asUser: user, mode) { tx in try body(tx, try level(user, event, in: tx)) }
    }

    /// Runs `body` as `user` if they are an admin or owner of `event`; anyone else with access
    /// is refused as forbidden with `refusal`.
    func withAdminAccess<T>(_ user: UUID, _ event: UUID, refusal: String, _ body: (PGConnection) throws -> T) throws -> T {
        try withAccess(user, event) { tx, summary in
            guard summary.accessLevel.maySeeReceipts else { throw StaffcastError.forbidden(refusal) }
            return try body(tx)
        }
    }

    /// Runs `body` (with the event's id) as `user` if they are an admin or owner of the event of
    /// `message` (one they cannot see is no_such_message); anyone else with access is refused
    /// with `refusal`.
    func withMessageAdminAccess<T>(_ user: UUID, message: UUID, refusal: String,
                                   _ body: (PGConnection, UUID) throws -> T) throws -> T {
        let event = try conn.transaction(asUser: user) { tx in
            try tx.query("SELECT event_id FROM staff_messages WHERE id = $1", [Self.id(message)]).uuid(0, 0)
        }
        guard let event else { throw StaffcastError.noSuchMessage(message) }
        return try withAdminAccess(user, event, refusal: refusal) { tx in try body(tx, event) }
    }

    public func unreadCount(_ user: UUID, _ event: UUID, in tx: PGConnection) throws -> Int {
        // sql/005_read_state.sql: three index range scans, no array scans.
        try tx.query("SELECT staffcast_unread_count($1, $2)", [Self.id(user), Self.id(event)]).int(0, 0) ?? 0
    }

    /// Messages of `event` before `beforeSeq` (or the newest), oldest first.
    public func history(as user: UUID, event: UUID, beforeSeq: Int64?, limit: Int) throws -> [StaffMessage] {
        try withAccess(user, event) { tx, _ in
            try Self.messages(tx.query("""
                SELECT * FROM (SELECT \(Self.messageColumns(reader: "$1"))
                    FROM staff_messages m JOIN profiles p ON p.id = m.sender_id
                    WHERE m.event_id = $2 AND m.seq < $3 AND \(Self.unexpired) ORDER BY m.seq DESC LIMIT $4) h
                ORDER BY 2
                """, [Self.id(user), Self.id(event), String(beforeSeq ?? Int64.max), String(limit)]))
        }
    }

    /// Unexpired messages of `event` after `sinceSeq`, oldest first.
    public func messages(as user: UUID, event: UUID, sinceSeq: Int64, limit: Int) throws -> [StaffMessage] {
        try withAccess(user, event) { tx, _ in
            try Self.messages(tx.query("""
                SELECT \(Self.messageColumns(reader: "$1")) FROM staff_messages m JOIN profiles p ON p.id = m.sender_id
                WHERE m.event_id = $2 AND m.seq > $3 AND \(Self.unexpired) ORDER BY m.seq LIMIT $4
                """, [Self.id(user), Self.id(event), String(sinceSeq), String(limit)]))
        }
    }

    /// Stores a message as `user` and returns it once committed.
    /// With `duplicateWindowMinutes` > 0 the double-send guard applies (unless `request.force`):
    /// `conflict` when the same text went to the event within that many minutes.
    public func send(as user: UUID, _ asked: SendRequest, duplicateWindowMinutes: Int = 0) throws -> StaffMessage {
        let stored = try withAccess(user, asked.eventID) { tx, summary in
            guard summary.accessLevel.maySend else {
                throw StaffcastError.forbidden("Only admins and owners of an event may send to it; you are staff.")
            }
            var request = try resolvingTemplate(asked, in: tx)
            request.teams = try requireTeams(request.teams, event: request.eventID, in: tx)
            try requireAudience(request.teams, event: request.eventID, sender: user, in: tx)
            if duplicateWindowMinutes > 0 && !request.force {
                try tx.query("SELECT pg_advisory_xact_lock(\(Self.messageLogLock.0), \(Self.messageLogLock.1))")
                let dup = try tx.query("SELECT \(Self.duplicateExists(event: "$1::uuid", text: "$2::text", window: "$3::int"))",
                                       [Self.id(request.eventID), request.message, String(duplicateWindowMinutes)])
                if dup.bool(0, 0) == true { throw Self.duplicateRefused(window: duplicateWindowMinutes) }
            }
            let r = try tx.query("""
                WITH m AS (
                    INSERT INTO staff_messages (event_id, sender_id, message, message_type, priority, expires_at,
                                                escalate_after_minutes, teams, poll_options)
                    VALUES ($2, $1, $3, $4, $5, now() + make_interval(mins => $6::int), $7::int, $8::text[], $9::text[])
                    RETURNING *)
                SELECT \(Self.insertedMessageColumns) FROM m JOIN profiles p ON p.id = m.sender_id
                """, [Self.id(user), Self.id(request.eventID), request.message, request.messageType.rawValue,
                      request.priority.rawValue, request.expiresInMinutes.map(String.init),
                      request.escalateAfterMinutes.map(String.init), Self.textArray(request.teams),
                      request.poll.map { Self.textArray($0.options) }])
            return try Self.messages(r)
        }
        guard let message = stored.first else {
            throw PostgresError(.unexpectedResult, "the inserted message was not returned")
        }
        return message
    }

    /// Marks the message read by `user` (idempotent); returns its event and the user's
    /// remaining unread count there.
    ///
    /// The row in `message_reads` is the mark; its primary key makes concurrent marks of one
    /// message by one user insert exactly one row, and only the statement that inserted it
    /// appends the user to `read_by` (so `read_by` never holds a user twice).
    public func markRead(as user: UUID, message: UUID) throws -> (eventID: UUID, unreadCount: Int) {
        try conn.transaction(asUser: user) { tx in
            try tx.query("""
                WITH mark AS (
                    INSERT INTO message_reads (message_id, user_id, event_id)
                    SELECT m.id, $2::uuid, m.event_id FROM staff_messages m WHERE m.id = $1
                    ON CONFLICT DO NOTHING RETURNING message_id)
                UPDATE staff_messages SET read_by = array_append(read_by, $2::uuid), read_count = read_count + 1
                WHERE id IN (SELECT message_id FROM mark)
                """, [Self.id(message), Self.id(user)])
            let r = try tx.query("SELECT event_id FROM staff_messages WHERE id = $1", [Self.id(message)])
            guard let event = r.uuid(0, 0) else {
                throw StaffcastError.noSuchMessage(message)
            }
            return (event, try unreadCount(user, event, in: tx))
        }
    }

    /// Who has read a message, for its event's admins and owners.
    public func receipts(as user: UUID, message: UUID) throws -> Receipts {
        try withMessageAdminAccess(user, message: message, refusal: "Only admins and owners of the event may see read receipts.") { tx, event in
            // One access check inside the function, not one per roster row (sql/005).
            let r = try tx.query("SELECT user_id, display_name, \(Self.epochMicros("read_at")) FROM staffcast_receipts($1)",
                                 [Self.id(message)])
            // Each person's latest reply (sql/008), shown with their receipt.
            let replies = try Self.replies(tx.query("""
                SELECT DISTINCT ON (r.user_id) \(Self.replyColumns)
                FROM message_replies r JOIN profiles p ON p.id = r.user_id
                WHERE r.message_id = $1 ORDER BY r.user_id, r.seq DESC
                """, [Self.id(message)]))
            let latest = Dictionary(replies.map { ($0.userID, $0) }, uniquingKeysWith: { a, _ in a })
            // The delivery funnel (sql/012): how each person was reached, oldest first.
            let ways = try tx.query("SELECT user_id, via, \(Self.epochMicros("at")) FROM message_reach WHERE message_id = $1 ORDER BY at, via",
                                    [Self.id(message)])
            var reached: [UUID: [Reached]] = [:]
            for i in 0..<ways.rowCount {
                guard let u = ways.uuid(i, 0), let via = ways.string(i, 1), let at = ways.date(i, 2) else { continue }
                reached[u, default: []].append(Reached(via: via, at: at))
            }
            var read: [Receipts.Person] = []
            var unread: [Receipts.Person] = []
            for i in 0..<r.rowCount {
                guard let id = r.uuid(i, 0) else { continue }
                let readAt = r.date(i, 2)
                var person = Receipts.Person(userID: id, displayName: r.string(i, 1) ?? "", readAt: readAt)
                person.reply = latest[id]
                person.reached = reached[id] ?? []
                if readAt != nil { read.append(person) } else { unread.append(person) }
            }
            return Receipts(messageID: message, eventID: event, readBy: read, unreadBy: unread)
        }
    }

    /// The events `user` has access to, by name.
    public func events(of user: UUID) throws -> [EventSummary] {
        try conn.transaction(asUser: user) { tx in
            let r = try tx.query("""
                SELECT e.id, e.name, \(Self.epochMicros("e.starts_at")), a.access_level
                FROM event_access a JOIN events e ON e.id = a.event_id WHERE a.user_id = $1
                ORDER BY e.starts_at NULLS LAST, e.name
                """, [Self.id(user)])
            return (0..<r.rowCount).compactMap { i in
                guard let id = r.uuid(i, 0), let level = r.string(i, 3).flatMap(AccessLevel.init) else { return nil }
                return EventSummary(id: id, name: r.string(i, 1) ?? "", startsAt: r.date(i, 2), accessLevel: level)
            }
        }
    }
}
