import Foundation
import StaffcastCore

/// Read storms folded: every staff member marks one emergency read at once, and the marks
/// that arrive together become one UPDATE per message instead of one rewrite of `read_by` per
/// reader.
///
/// Runs as the server's own login, so the access check is explicit (a row of `event_access`
/// for the reader and the message's event: the predicate of the row-level security policy the
/// one-at-a-time path runs under). `read_by` stays free of duplicates: the UPDATE appends
/// only readers not in the row as PostgreSQL re-reads it under its row lock.
extension Store {
    public struct PendingRead: Sendable, Equatable {
        public var user: UUID
        public var message: UUID
        public init(user: UUID, message: UUID) {
            self.user = user
            self.message = message
        }
    }

    /// For each mark: the message's event and the reader's unread count there afterwards, or
    /// nil when the reader cannot see that message (nothing was changed for it).
    public func markReadBatch(_ reads: [PendingRead]) throws -> [(eventID: UUID, unreadCount: Int)?] {
        guard !reads.isEmpty else { return [] }
        let users = "{" + reads.map { Self.id($0.user) }.joined(separator: ",") + "}"
        let messages = "{" + reads.map { Self.id($0.message) }.joined(separator: ",") + "}"
        return try conn.transaction { tx in
            // Which marks are allowed, and their events.
            let ok = try tx.query("""
                SELECT r.i, m.event_id
                FROM unnest($1::uuid[], $2::uuid[]) WITH ORDINALITY AS r(user_id, message_id, i)
                JOIN staff_messages m ON m.id = r.message_id
                JOIN event_access a ON a.event_id = m.event_id AND a.user_id = r.user_id
                """, [users, messages])
            var events: [Int: UUID] = [:]
            for row in 0..<ok.rowCount {
                if let i = ok.int(row, 0), let e = ok.uuid(row, 1) { events[i - 1] = e }
            }
            let allowed = reads.indices.filter { events[$0] != nil }
            guard !allowed.isEmpty else { return reads.map { _ in nil } }
            // One UPDATE per message for all its new readers.
            let byMessage = Dictionary(grouping: allowed, by: { reads[$0].message })
            let ids = "{" + byMessage.keys.map(Self.id).joined(separator: ",") + "}"
            let pairsUsers = "{" + byMessage.flatMap { _, idx in idx.map { Self.id(reads[$0].user) } }.joined(separator: ",") + "}"
            let pairsMessages = "{" + byMessage.flatMap { m, idx in idx.map { _ in Self.id(m) } }.joined(separator: ",") + "}"
            try tx.query("""
                UPDATE staff_messages m
                SET read_by = m.read_by || ARRAY(
                    SELECT DISTINCT p.user_id FROM unnest($2::uuid[], $3::uuid[]) AS p(user_id, message_id)
                    WHERE p.message_id = m.id AND NOT (p.user_id = ANY (m.read_by)))
                WHERE m.id = ANY ($1::uuid[])
                  AND EXISTS (SELECT 1 FROM unnest($2::uuid[], $3::uuid[]) AS p(user_id, message_id)
                              WHERE p.message_id = m.id AND NOT (p.user_id = ANY (m.read_by)))
                """, [ids, pairsUsers, pairsMessages])
            // Each reader's unread count on each event, after the update.
            let pairs = Array(Set(allowed.map { PairKey(user: reads[$0].user, event: events[$0]!) }))
            let u = "{" + pairs.map { Self.id($0.user) }.joined(separator: ",") + "}"
            let e = "{" + pairs.map { Self.id($0.event) }.joined(separator: ",") + "}"
            let counts = try tx.query("""
                SELECT p.user_id, p.event_id, (
                    SELECT count(*) FROM staff_messages m
                    WHERE m.event_id = p.event_id AND NOT (p.user_id = ANY (m.read_by)) AND m.sender_id <> p.user_id
                      AND \(Self.unexpired))
                FROM unnest($1::uuid[], $2::uuid[]) AS p(user_id, event_id)
                """, [u, e])
            var unread: [PairKey: Int] = [:]
            for row in 0..<counts.rowCount {
                if let user = counts.uuid(row, 0), let event = counts.uuid(row, 1) {
                    unread[PairKey(user: user, event: event)] = counts.int(row, 2) ?? 0
                }
            }
            return reads.indices.map { i in
                guard let event = events[i] else { return nil }
                return (event, unread[PairKey(user: reads[i].user, event: event)] ?? 0)
            }
        }
    }

    private struct PairKey: Hashable {
        var user: UUID
        var event: UUID
    }
}
