import Foundation
import StaffcastCore

/// Read storms folded: every staff member marks one emergency read at once, and the marks
/// that arrive together become one UPDATE per message instead of one rewrite of `read_by` per
/// reader.
///
/// Runs as the server's own login, so the access check is explicit (a row of `event_access`
/// for the reader and the message's event: the predicate of the row-level security policy the
/// one-at-a-time path runs under). Each mark is a row of `message_reads` (sql/005), whose
/// primary key keeps it unique; `read_by` is appended only with the readers whose row the
/// same statement inserted, so it stays exact and free of duplicates.
extension Store {
    public struct PendingRead: Sendable, Equatable {
        public var user: UUID
        public var message: UUID
        public init(user: UUID, message: UUID) {
            self.user = user
            self.message = message
        }
    }

    /// A mark's event, the reader's unread count there afterwards, and the highest seq of the
    /// event the count's snapshot could see: a message committed after it is not in the count
    /// (`CountedUnread`, the `read` frame's `counted_through_seq`).
    public typealias MarkedRead = (eventID: UUID, unreadCount: Int, countedThroughSeq: Int64)

    /// For each mark: the message's event and the reader's unread count there afterwards, or
    /// nil when the reader cannot see that message (nothing was changed for it).
    public func markReadBatch(_ reads: [PendingRead]) throws -> [MarkedRead?] {
        try markReadBatch(reads, all: []).reads
    }

    /// The statement that marks read the pairs `$1` (users) × `$2` (messages), `r` joined to
    /// their message `m`, kept where `filter` (SQL after the join; empty: all) holds. Rows of
    /// message_reads (the primary key drops repeats, in this batch or already stored), and for
    /// each message one UPDATE that appends exactly the readers whose row this statement inserted.
    static func markReads(only filter: String = "") -> String {
        """
        WITH mark AS (
            INSERT INTO message_reads (message_id, user_id, event_id)
            SELECT DISTINCT r.message_id, r.user_id, m.event_id
            FROM unnest($1::uuid[], $2::uuid[]) AS r(user_id, message_id)
            JOIN staff_messages m ON m.id = r.message_id
            \(filter)
            ON CONFLICT DO NOTHING RETURNING message_id, user_id)
        UPDATE staff_messages m
        SET read_by = m.read_by || n.readers, read_count = m.read_count + cardinality(n.readers)
        FROM (SELECT message_id, array_agg(user_id) AS readers FROM mark GROUP BY message_id) n
        WHERE m.id = n.message_id
        """
    }

    /// Single marks and mark-all requests (`Store+ReadAll.swift`) committed in one transaction.
    public func markReadBatch(_ reads: [PendingRead], all: [PendingReadAll]) throws
        -> (reads: [MarkedRead?], all: [ReadAllResult?]) {
        guard !reads.isEmpty || !all.isEmpty else { return ([], []) }
        let users = "{" + reads.map { Self.id($0.user) }.joined(separator: ",") + "}"
        let messages = "{" + reads.map { Self.id($0.message) }.joined(separator: ",") + "}"
        // One pipeline, one round trip: which marks are allowed (and their events), the marks,
        // and each allowed reader's unread count on each event afterwards.
        let statements: [(sql: String, params: [String?])] = [
            ("""
            SELECT r.i, m.event_id
            FROM unnest($1::uuid[], $2::uuid[]) WITH ORDINALITY AS r(user_id, message_id, i)
            JOIN staff_messages m ON m.id = r.message_id
            JOIN event_access a ON a.event_id = m.event_id AND a.user_id = r.user_id
            WHERE \(Self.messageIsFor(user: "r.user_id", level: "a.access_level"))
            """, [users, messages]),
            (Self.markReads(only: """
                JOIN event_access a ON a.event_id = m.event_id AND a.user_id = r.user_id
                WHERE \(Self.messageIsFor(user: "r.user_id", level: "a.access_level"))
                """), [users, messages]),
            // What depends on the whole event is counted in one pass over it for the batch,
            // never once per reader (`eventSendCounts`).
            ("""
            WITH p AS MATERIALIZED (
                     SELECT DISTINCT r.user_id, m.event_id
                     FROM unnest($1::uuid[], $2::uuid[]) AS r(user_id, message_id)
                     JOIN staff_messages m ON m.id = r.message_id
                     JOIN event_access a ON a.event_id = m.event_id AND a.user_id = r.user_id),
                 e AS MATERIALIZED (\(Self.eventSendCounts(events: "SELECT DISTINCT event_id FROM p"))),
                 t AS (SELECT event_id, sum(untargeted)::int8 AS total FROM e GROUP BY event_id)
            SELECT p.user_id, p.event_id,
                   \(Self.unreadCount(user: "p.user_id", event: "p.event_id", untargeted: "coalesce(t.total, 0)",
                                      ownSends: "coalesce(s.sent, 0)")),
                   \(Self.countedThroughSeq(event: "p.event_id"))
            FROM p LEFT JOIN t USING (event_id)
            LEFT JOIN e s ON s.event_id = p.event_id AND s.sender_id = p.user_id
            """, [users, messages]),
        ]
        let results = try conn.pipelinedTransaction(statements + (all.isEmpty ? [] : Self.readAllStatements(all)), customPlans: true)
        let ok = results[0], counts = results[2]
        var events: [Int: UUID] = [:]
        for row in 0..<ok.rowCount {
            if let i = ok.int(row, 0), let e = ok.uuid(row, 1) { events[i - 1] = e }
        }
        let unread = Self.unreadCounts(counts)
        let single: [MarkedRead?] = reads.indices.map { i in
            guard let event = events[i] else { return nil }
            let counted = unread[PairKey(user: reads[i].user, event: event)]
            return (event, counted?.count ?? 0, counted?.through ?? 0)
        }
        return (single, all.isEmpty ? [] : Self.readAllResults(all, results[3], results[4]))
    }

    struct PairKey: Hashable {
        var user: UUID
        var event: UUID
    }

    /// SQL: the highest seq of `event` this statement's snapshot sees. In the statement that
    /// counts, so it names exactly what was counted (each statement of a READ COMMITTED
    /// transaction has its own snapshot); one backward step of staff_messages_event_seq.
    static func countedThroughSeq(event: String) -> String {
        "(SELECT coalesce(max(cm.seq), 0) FROM staff_messages cm WHERE cm.event_id = \(event))"
    }

    /// Rows (user, event, unread count, counted through seq) by user and event.
    static func unreadCounts(_ counts: PGResult) -> [PairKey: (count: Int, through: Int64)] {
        var unread: [PairKey: (count: Int, through: Int64)] = [:]
        for row in 0..<counts.rowCount {
            if let user = counts.uuid(row, 0), let event = counts.uuid(row, 1) {
                unread[PairKey(user: user, event: event)] = (counts.int(row, 2) ?? 0, counts.int64(row, 3) ?? 0)
            }
        }
        return unread
    }
}
