import Foundation
import StaffcastCore

/// "Mark all read" (`mark_all_read`) as one request: every message of an event up to a seq
/// becomes read for the asker, in the same group-commit transaction as single marks
/// (`markReadBatch(_:all:)`). Emergency and urgent messages are left alone: acknowledging one
/// is a deliberate act (`mark_read`, Shift+A in the terminal), never a side effect. Like single
/// marks it runs as the server's login, so the access check is explicit (`event_access`).
extension Store {
    public struct PendingReadAll: Sendable, Equatable {
        public var user: UUID
        public var event: UUID
        /// Marks messages with a seq up to this one (what the client has seen); nil: all.
        public var throughSeq: Int64?
        public init(user: UUID, event: UUID, throughSeq: Int64?) {
            self.user = user
            self.event = event
            self.throughSeq = throughSeq
        }
    }

    public struct ReadAllResult: Sendable, Equatable {
        /// The highest seq of the event that was considered (at most the one asked for).
        public var throughSeq: Int64
        /// How many messages became read now (already read ones are not counted).
        public var marked: Int
        /// The asker's unread count on the event afterwards (the emergencies left to acknowledge).
        public var unreadCount: Int
        /// The highest seq of the event the count's snapshot could see (`CountedUnread`).
        public var countedThroughSeq: Int64
    }

    /// Two statements: the marks (one statement, one snapshot: the seq reported is the one
    /// used), then each asker's unread count. Both keep to the asker's audience (`messageIsFor`,
    /// `unreadCount`: sql/011): a team message the asker is not in is neither marked nor
    /// counted, so the count equals what `subscribe` says.
    static func readAllStatements(_ all: [PendingReadAll]) -> [(sql: String, params: [String?])] {
        let users = "{" + all.map { id($0.user) }.joined(separator: ",") + "}"
        let events = "{" + all.map { id($0.event) }.joined(separator: ",") + "}"
        let throughs = "{" + all.map { String($0.throughSeq ?? Int64.max) }.joined(separator: ",") + "}"
        return [
            ("""
            WITH r AS (
                SELECT r.i, r.user_id, r.event_id,
                       (SELECT coalesce(max(m.seq), 0) FROM staff_messages m
                        WHERE m.event_id = r.event_id AND m.seq <= r.through) AS through
                FROM unnest($1::uuid[], $2::uuid[], $3::bigint[]) WITH ORDINALITY AS r(user_id, event_id, through, i)
                JOIN event_access a ON a.event_id = r.event_id AND a.user_id = r.user_id),
            mark AS (
                INSERT INTO message_reads (message_id, user_id, event_id)
                SELECT DISTINCT m.id, r.user_id, m.event_id
                FROM r JOIN staff_messages m ON m.event_id = r.event_id AND m.seq <= r.through
                JOIN event_access a ON a.event_id = r.event_id AND a.user_id = r.user_id
                WHERE m.sender_id <> r.user_id AND \(unexpired) AND \(messageIsFor(user: "r.user_id", level: "a.access_level"))
                  AND m.message_type <> 'emergency' AND m.priority <> 'urgent'
                ON CONFLICT DO NOTHING RETURNING message_id, user_id, event_id),
            appended AS (
                UPDATE staff_messages m
                SET read_by = m.read_by || n.readers, read_count = m.read_count + cardinality(n.readers)
                FROM (SELECT message_id, array_agg(user_id) AS readers FROM mark GROUP BY message_id) n
                WHERE m.id = n.message_id)
            SELECT r.i, r.through, (SELECT count(*) FROM mark k WHERE k.user_id = r.user_id AND k.event_id = r.event_id)
            FROM r
            """, [users, events, throughs]),
            ("""
            WITH p AS (SELECT DISTINCT r.user_id, r.event_id
                       FROM unnest($1::uuid[], $2::uuid[]) AS r(user_id, event_id)
                       JOIN event_access a ON a.event_id = r.event_id AND a.user_id = r.user_id)
            SELECT p.user_id, p.event_id, \(unreadCount(
                user: "p.user_id", event: "p.event_id",
                untargeted: "(SELECT count(*) FROM staff_messages m WHERE m.event_id = p.event_id AND m.teams = '{}' AND \(unexpired))",
                ownSends: "(SELECT count(*) FROM staff_messages m WHERE m.event_id = p.event_id AND m.sender_id = p.user_id AND \(unexpired))")),
                   \(countedThroughSeq(event: "p.event_id"))
            FROM p
            """, [users, events]),
        ]
    }

    /// Each request's result, nil when the asker has no access to the event (nothing changed).
    static func readAllResults(_ all: [PendingReadAll], _ marks: PGResult, _ counts: PGResult) -> [ReadAllResult?] {
        let unread = unreadCounts(counts)
        var out = [ReadAllResult?](repeating: nil, count: all.count)
        for row in 0..<marks.rowCount {
            guard let i = marks.int(row, 0), out.indices.contains(i - 1) else { continue }
            let request = all[i - 1]
            let counted = unread[PairKey(user: request.user, event: request.event)]
            out[i - 1] = ReadAllResult(throughSeq: marks.int64(row, 1) ?? 0, marked: marks.int(row, 2) ?? 0,
                                       unreadCount: counted?.count ?? 0, countedThroughSeq: counted?.through ?? 0)
        }
        return out
    }
}
