import Foundation
import StaffcastCore

/// Subscribe snapshots for many users of one event at once, for reconnect storms: ten
/// thousand staff whose Wi-Fi came back are answered with a handful of statements per batch
/// instead of several each.
///
/// Runs as the server's own login in one REPEATABLE READ snapshot, so the access check is
/// explicit here (the same predicate the row-level security policies use: a row of
/// `event_access` for the user and event), as it is for live fan-out; a user without access
/// gets nothing but `noAccess`.
extension Store {
    public struct SubscribeRequest: Sendable, Equatable {
        public var user: UUID
        public var sinceSeq: Int64?
        public init(user: UUID, sinceSeq: Int64?) {
            self.user = user
            self.sinceSeq = sinceSeq
        }
    }

    public struct SubscribeBatch: Sendable {
        public enum Access: Sendable, Equatable {
            case granted(EventSummary)
            case noAccess
            case noEvent
        }

        public struct Entry: Sendable {
            public var access: Access
            public var unreadCount: Int
            /// Indices into `messages`, oldest first.
            public var history: [Int]
            /// Indices into `messages` of those this user has read.
            public var read: Set<Int>
            /// More messages follow this entry's `since_seq` than `history` holds.
            public var more = false
            /// Indices into `changes`: edits and retracts of messages at or before this
            /// entry's `since_seq` that the client may have missed while away.
            public var changes: [Int] = []
        }

        /// An edit or retract a reconnecting client may have missed, as it stands now.
        public enum Change: Sendable, Equatable {
            case updated(StaffMessage)
            case retracted(messageID: UUID, seq: Int64)

            public var seq: Int64 {
                switch self {
                case .updated(let m): m.seq
                case .retracted(_, let seq): seq
                }
            }
        }

        /// Every message some entry's history holds, in seq order, with `read` false.
        public var messages: [StaffMessage]
        /// Edits and retracts some entry's `changes` names, in seq order.
        public var changes: [Change] = []
        /// One per request, in order.
        public var entries: [Entry]
        /// The highest message, access-change and message-change seq the snapshot could see.
        public var historyThrough: Int64
        public var accessThrough: Int64
        public var changesThrough: Int64
    }

    public func subscribeBatch(event: UUID, _ requests: [SubscribeRequest]) throws -> SubscribeBatch {
        try conn.transaction("REPEATABLE READ READ ONLY") { tx in
            // Plans for this batch's arrays, not a generic plan (see `pipelinedTransaction`).
            try tx.execute("SET LOCAL plan_cache_mode = force_custom_plan")
            let eventID = Self.id(event)
            let users = "{" + requests.map { Self.id($0.user) }.joined(separator: ",") + "}"
            // message_changes is readable by the server's login (its policy hides rows only from
            // staffcast_app), so its max needs no SECURITY DEFINER function.
            let through = try tx.query("""
                SELECT staffcast_visible_message_seq(), staffcast_visible_access_seq(),
                       (SELECT coalesce(max(seq), 0) FROM message_changes)
                """)
            let historyThrough = through.int64(0, 0) ?? 0
            let accessThrough = through.int64(0, 1) ?? 0
            let changesThrough = through.int64(0, 2) ?? 0

            let e = try tx.query("SELECT name, \(Self.epochMicros("starts_at")) FROM events WHERE id = $1", [eventID])
            guard e.rowCount == 1 else {
                return SubscribeBatch(messages: [], entries: requests.map { _ in .init(access: .noEvent, unreadCount: 0, history: [], read: []) },
                                      historyThrough: historyThrough, accessThrough: accessThrough,
                                  changesThrough: changesThrough)
            }
            let name = e.string(0, 0) ?? ""
            let startsAt = e.date(0, 1)

            let a = try tx.query("""
                WITH e AS MATERIALIZED (\(Self.eventSendCounts(events: "SELECT $1::uuid")))
                SELECT u.i, a.access_level,
                       CASE WHEN a.access_level IS NULL THEN 0 ELSE
                           \(Self.unreadCount(user: "u.id", event: "$1", untargeted: "t.total", ownSends: "coalesce(s.sent, 0)"))
                       END
                FROM unnest($2::uuid[]) WITH ORDINALITY AS u(id, i)
                -- staffcast_unread_count, with the event's total to everyone and the subscribers'
                -- own sends counted once for the batch
                CROSS JOIN (SELECT coalesce(sum(untargeted), 0)::int8 AS total FROM e) t
                LEFT JOIN event_access a ON a.event_id = $1 AND a.user_id = u.id
                LEFT JOIN e s ON s.sender_id = u.id
                """, [eventID, users])
            var entries = requests.map { _ in SubscribeBatch.Entry(access: .noAccess, unreadCount: 0, history: [], read: []) }
            for row in 0..<a.rowCount {
                guard let i = a.int(row, 0).map({ $0 - 1 }), entries.indices.contains(i) else { continue }
                if let level = a.string(row, 1).flatMap(AccessLevel.init) {
                    entries[i].access = .granted(EventSummary(id: event, name: name, startsAt: startsAt, accessLevel: level))
                    entries[i].unreadCount = a.int(row, 2) ?? 0
                }
            }

            // The messages: the newest page for plain subscribes, and what follows each
            // distinct since_seq (a storm's clients mostly share a few).
            var bySeq: [Int64: StaffMessage] = [:]
            var latest: [Int64] = []
            var after: [Int64: [Int64]] = [:]
            var sinceWithMore: Set<Int64> = []
            let granted = entries.indices.filter { if case .granted = entries[$0].access { return true } else { return false } }
            if granted.contains(where: { requests[$0].sinceSeq == nil }) {
                let r = try tx.query("""
                    SELECT \(Self.messageColumns(reader: "NULL")) FROM staff_messages m JOIN profiles p ON p.id = m.sender_id
                    WHERE m.event_id = $1 AND \(Self.unexpired) ORDER BY m.seq DESC LIMIT \(Limits.subscribeHistory)
                    """, [eventID])
                for m in try Self.messages(r).reversed() {
                    bySeq[m.seq] = m
                    latest.append(m.seq)
                }
            }
            for since in Set(granted.compactMap { requests[$0].sinceSeq }) {
                let r = try tx.query("""
                    SELECT \(Self.messageColumns(reader: "NULL")) FROM staff_messages m JOIN profiles p ON p.id = m.sender_id
                    WHERE m.event_id = $1 AND m.seq > $2 AND \(Self.unexpired) ORDER BY m.seq LIMIT \(Limits.maxCatchUp + 1)
                    """, [eventID, String(since)])
                var list = try Self.messages(r)
                if list.count > Limits.maxCatchUp {
                    sinceWithMore.insert(since)
                    list.removeLast()
                }
                for m in list { bySeq[m.seq] = m }
                after[since] = list.map(\.seq)
            }
            let messages = bySeq.values.sorted { $0.seq < $1.seq }
            let index = Dictionary(uniqueKeysWithValues: messages.enumerated().map { ($1.seq, $0) })
            // Messages to teams go only to their audience (and the event's admins and owners):
            // who of this batch is in the audience of which (only the pairs that are).
            let targeted = messages.filter { !$0.teams.isEmpty }
            var audience: [Int: Set<Int64>] = [:]
            if !targeted.isEmpty && !granted.isEmpty {
                for (i, seq) in try Self.pairs(in: "message_audience", users: users, messages: targeted, tx) {
                    audience[i, default: []].insert(seq)
                }
            }
            for i in granted {
                var seqs = requests[i].sinceSeq.map { after[$0] ?? [] } ?? latest
                if !targeted.isEmpty, case .granted(let summary) = entries[i].access, !summary.accessLevel.maySeeReceipts {
                    let mine = audience[i] ?? []
                    seqs = seqs.filter { seq in index[seq].map { messages[$0].teams.isEmpty } ?? false || mine.contains(seq) }
                }
                entries[i].history = seqs.compactMap { index[$0] }
                entries[i].more = requests[i].sinceSeq.map { sinceWithMore.contains($0) } ?? false
            }

            // Who of the batch has read which of these messages (only the pairs that are read).
            if !messages.isEmpty && !granted.isEmpty {
                for (i, seq) in try Self.pairs(in: "message_reads", users: users, messages: messages, tx) {
                    guard entries.indices.contains(i), let at = index[seq] else { continue }
                    entries[i].read.insert(at)
                }
            }
            let changes = try missedChanges(event: eventID, users: users, requests: requests, granted: granted,
                                            entries: &entries, tx)
            return SubscribeBatch(messages: messages, changes: changes, entries: entries,
                                  historyThrough: historyThrough, accessThrough: accessThrough,
                                  changesThrough: changesThrough)
        }
    }

    /// Edits and retracts of messages at or before each reconnecting client's `since_seq` that
    /// it may have missed: a phone offline while "Evacuate hall B" was corrected to hall C, or
    /// retracted, kept the old text (or kept ringing) after catching up. The client was
    /// connected when its newest message (`since_seq`) was sent, so what changed from a minute
    /// before that on is sent again; one seen live already is harmless to apply twice. At most
    /// `Limits.maxCatchUp` changes, the newest; targeted messages only to their audience and
    /// the event's admins and owners, as history.
    private func missedChanges(event eventID: String, users: String, requests: [SubscribeRequest], granted: [Int],
                               entries: inout [SubscribeBatch.Entry], _ tx: PGConnection) throws -> [SubscribeBatch.Change] {
        let sinces = Set(granted.compactMap { requests[$0].sinceSeq })
        guard let highest = sinces.max() else { return [] }
        // The window opens at the earliest newest-message among the batch's since_seq values;
        // a since_seq with no message at or before it has nothing older to miss and is left
        // out (it would otherwise close the window for the whole batch).
        let r = try tx.query("""
            SELECT \(Self.messageColumns(reader: "NULL")), m.retracted_at IS NOT NULL
            FROM staff_messages m JOIN profiles p ON p.id = m.sender_id
            WHERE m.id IN (SELECT c.message_id FROM message_changes c
                           WHERE c.event_id = $1 AND c.changed_at >= (
                               SELECT min(newest.sent_at) - interval '1 minute'
                               FROM unnest($2::bigint[]) AS since(seq)
                               CROSS JOIN LATERAL (SELECT s.sent_at FROM staff_messages s
                                                   WHERE s.event_id = $1 AND s.seq <= since.seq
                                                   ORDER BY s.seq DESC LIMIT 1) newest))
              AND m.seq <= $3 AND (m.expires_at IS NULL OR m.expires_at > now())
            ORDER BY m.seq DESC LIMIT \(Limits.maxCatchUp)
            """, [eventID, "{" + sinces.map(String.init).joined(separator: ",") + "}", String(highest)])
        guard r.rowCount > 0 else { return [] }
        var changes: [SubscribeBatch.Change] = []
        let current = try Self.messages(r)
        for (row, message) in current.enumerated().reversed() {
            let retracted = r.bool(row, Self.messageColumnCount) == true
            changes.append(retracted ? .retracted(messageID: message.id, seq: message.seq) : .updated(message))
        }
        let targeted = current.filter { !$0.teams.isEmpty }
        var audience: [Int: Set<Int64>] = [:]
        if !targeted.isEmpty {
            for (i, seq) in try Self.pairs(in: "message_audience", users: users, messages: targeted, tx) {
                audience[i, default: []].insert(seq)
            }
        }
        let isTargeted = Set(targeted.map(\.seq))
        for i in granted {
            guard let since = requests[i].sinceSeq, case .granted(let summary) = entries[i].access else { continue }
            let seesAll = summary.accessLevel.maySeeReceipts
            entries[i].changes = changes.indices.filter { c in
                let seq = changes[c].seq
                return seq <= since && (seesAll || !isTargeted.contains(seq) || audience[i]?.contains(seq) == true)
            }
        }
        return changes
    }

    /// The (index in the batch, seq) pairs of the batch's `users` (a uuid array) and `messages`
    /// that have a row in `table` (message_audience, message_reads): only the pairs that do.
    private static func pairs(in table: String, users: String, messages: [StaffMessage],
                              _ tx: PGConnection) throws -> [(Int, Int64)] {
        let ids = "{" + messages.map { id($0.id) }.joined(separator: ",") + "}"
        let r = try tx.query("""
            SELECT u.i, m.seq FROM unnest($1::uuid[]) WITH ORDINALITY AS u(id, i)
            JOIN \(table) t ON t.user_id = u.id AND t.message_id = ANY ($2::uuid[])
            JOIN staff_messages m ON m.id = t.message_id
            """, [users, ids])
        return (0..<r.rowCount).compactMap { row in
            guard let i = r.int(row, 0), let seq = r.int64(row, 1) else { return nil }
            return (i - 1, seq)
        }
    }
}
