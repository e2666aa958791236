import Foundation
import StaffcastCore

/// Group commit of sends: many messages, one transaction, one WAL flush.
extension Store {
    public struct PendingSend: Sendable {
        public var sender: UUID
        public var request: SendRequest
        /// Chosen by the server, so each stored row is matched back to its request.
        public var id: UUID
        public init(sender: UUID, request: SendRequest, id: UUID = UUID()) {
            self.sender = sender
            self.request = request
            self.id = id
        }
    }

    /// Stores every send that its sender may make, in one transaction, and returns the stored
    /// message for each (nil for one the sender may not make: nothing of it was stored; ask
    /// `send(as:)` for its precise error).
    ///
    /// Each sender's messages are one multi-row INSERT run as that sender (`staffcast_app`
    /// with `staffcast.user_id` set), so row-level security judges every row as its own user;
    /// the join on `event_access` keeps a row the sender may not send out of the insert rather
    /// than failing the whole batch. `seq` order stays commit order: the statement trigger's
    /// advisory lock is taken once per statement, not per row. The whole transaction is one
    /// libpq pipeline: one round trip for the batch, however many senders it holds.
    ///
    /// The double-send guard (`duplicateWindowMinutes` > 0): a send without `force` whose text
    /// went to the same event within the window — before this batch or earlier in it — is
    /// left out too (nil), and its retry alone is refused with `conflict`. The log's advisory
    /// lock is taken first, so a guard check sees every send committed before it.
    public func sendBatch(_ sends: [PendingSend], duplicateWindowMinutes: Int = 0) throws -> [StaffMessage?] {
        try commitSends(sends, duplicateWindowMinutes: duplicateWindowMinutes).messages
    }

    /// What `commitSends` stored, and where the change logs stood when it committed.
    public struct CommittedSends: Sendable {
        /// The stored message of each send, in the order given (nil: not stored; see `sendBatch`).
        public var messages: [StaffMessage?]
        /// The batch's seqs and the logs committed before it (`LocalFanoutGate`); nil when
        /// nothing was stored.
        public var commit: LocalFanoutGate.Commit?
    }

    /// `sendBatch`, for the committing server's own fan-out. With an `origin` (this server's
    /// id) it also tells where the logs stood: the highest message seq below the batch's and
    /// the highest access and token change, all committed before it and none after (the gate
    /// lock of sql/014, taken shared before anything else); the server hands the batch to its
    /// own loops with it (`LocalFanoutGate`). The locks and the reads are the batch's first
    /// statement (`staffcast_begin_send_batch`, sql/015), in the same pipeline: no extra round
    /// trip. The batch's wake-up then says `message@<origin>` (the caller's origin names the
    /// server and the batch: `<id>:<n>`), which lets that server's listener skip the read
    /// (`ChangeListener.Shortcut`). Without an origin, `commit` is nil.
    public func commitSends(_ sends: [PendingSend], duplicateWindowMinutes: Int = 0, origin: String? = nil) throws -> CommittedSends {
        guard !sends.isEmpty else { return CommittedSends(messages: [], commit: nil) }
        // Within the batch the guard is decided here, in batch order (statements run by sender,
        // and a row cannot see its statement's neighbours): a second copy of a text waits for
        // its retry alone, which sees the first committed. The database check leaves this
        // batch's own rows out.
        var seen = Set<DuplicateKey>()
        var included = [Bool](repeating: true, count: sends.count)
        if duplicateWindowMinutes > 0 {
            for (i, s) in sends.enumerated() {
                // A template's text is read in the transaction: its copies are keyed by name.
                let key = DuplicateKey(event: s.request.eventID, text: s.request.template.map { "\u{0}template:\($0.name)" } ?? s.request.message)
                if !seen.insert(key).inserted && !s.request.force { included[i] = false }
            }
        }
        let bySender = Dictionary(grouping: sends.indices.filter { included[$0] }, by: { sends[$0].sender })
        let batchIDs = "{" + sends.map { Self.id($0.id) }.joined(separator: ",") + "}"
        // For the server's own fan-out (an origin), first the locks: the gate shared (no access
        // or token change can commit until this batch has: sql/014), then the message log's own
        // (its insert trigger would take it at the first insert), the batch's origin, and
        // where the three logs stand, read after the locks: all of it committed before this
        // batch, and nothing can join it before COMMIT (`staffcast_begin_send_batch`, sql/015:
        // one prepared statement). Without an origin (local_fanout off) none of it: ~0.3 ms of
        // PostgreSQL CPU a batch saved. Either way the guard below runs after the message log's
        // lock, so it sees every send committed before it.
        var statements: [(sql: String, params: [String?])] = []
        var positions: Int?
        if let origin {
            positions = statements.count
            statements.append(("SELECT messages_through, access_through, token_through FROM staffcast_begin_send_batch($1)", [origin]))
        } else if duplicateWindowMinutes > 0 {
            statements.append(("SELECT pg_advisory_xact_lock(\(Self.messageLogLock.0), \(Self.messageLogLock.1))", []))
        }
        statements.append(("SET LOCAL ROLE staffcast_app", []))
        var inserts: [Int] = [] // which results are the inserts
        for (sender, indices) in bySender.sorted(by: { $0.key.uuidString < $1.key.uuidString }) {
            let json = Self.sendRows(indices.map { sends[$0] })
            statements.append(("SELECT set_config('staffcast.user_id', $1, true)", [Self.id(sender)]))
            inserts.append(statements.count)
            statements.append(("""
                WITH x AS (
                    SELECT * FROM jsonb_to_recordset($1::jsonb)
                        AS x(ord int, id uuid, event_id uuid, message text, message_type text, priority text, expires_in int, force bool,
                              escalate_after int, template text, emergency_default int, teams text[], poll text[])),
                -- Sends by template take its text and defaults; one whose template is missing is left out.
                -- An emergency template escalates by default like any emergency (EscalationPolicy).
                r AS (
                    SELECT x.ord, x.id, x.event_id, coalesce(x.message, t.message) AS message,
                           coalesce(x.message_type, t.message_type) AS message_type, coalesce(x.priority, t.priority) AS priority,
                           CASE WHEN x.template IS NULL THEN x.expires_in ELSE coalesce(x.expires_in, t.expires_in_minutes) END AS expires_in,
                           x.force,
                           CASE WHEN x.template IS NULL THEN x.escalate_after
                                ELSE coalesce(x.escalate_after, CASE WHEN coalesce(x.message_type, t.message_type) = 'emergency'
                                                                     THEN x.emergency_default END) END AS escalate_after,
                           CASE WHEN x.teams IS NULL AND x.template IS NOT NULL THEN t.teams
                                ELSE coalesce(x.teams, '{}') END AS teams,
                           x.poll
                    FROM x LEFT JOIN message_templates t ON x.template IS NOT NULL AND t.event_id = x.event_id AND t.name = x.template
                    WHERE x.template IS NULL OR t.name IS NOT NULL),
                -- The double-send guard, once for the statement (sql/013): the ords of guarded rows
                -- whose text went to the event within the window.
                dup AS MATERIALIZED (
                    SELECT staffcast_duplicate_ords(array_agg(ord), array_agg(event_id), array_agg(message), $3::int, $4::uuid[]) AS ords
                    FROM r WHERE NOT force AND $3::int > 0),
                ok AS (
                    SELECT x.* FROM r x JOIN event_access a
                        ON a.event_id = x.event_id AND a.user_id = $2::uuid AND a.access_level IN ('admin', 'owner')
                        CROSS JOIN dup
                    WHERE NOT (x.ord = ANY (coalesce(dup.ords, '{}')))
                      -- Every team named must exist (one probe per name; a send naming none costs nothing):
                      -- a send with an unknown one is left out, and its retry alone says which.
                      AND (cardinality(x.teams) = 0
                           OR (SELECT count(*) FROM teams tt WHERE tt.event_id = x.event_id AND tt.name = ANY (x.teams))
                              = cardinality(x.teams))
                      -- and hold someone besides the sender (AudienceCheck): else left out, and its retry says so.
                      AND (cardinality(x.teams) = 0 OR \(Self.someoneIn(teams: "x.teams", event: "x.event_id", besides: "$2::uuid")))),
                m AS (
                    INSERT INTO staff_messages (id, event_id, sender_id, message, message_type, priority, expires_at,
                                                escalate_after_minutes, teams, poll_options)
                    SELECT id, event_id, $2::uuid, message, message_type, priority, now() + make_interval(mins => expires_in),
                           escalate_after, teams, poll
                    FROM ok ORDER BY ord
                    RETURNING *)
                SELECT \(Self.insertedMessageColumns) FROM m JOIN profiles p ON p.id = m.sender_id
                """, [json, Self.id(sender), String(duplicateWindowMinutes), batchIDs]))
        }
        // The locks, the logs, the role, each sender's user and rows, COMMIT: one round trip (pipeline mode).
        let results = try conn.pipelinedTransaction(statements)
        var stored: [UUID: StaffMessage] = [:]
        for i in inserts {
            for message in try Self.messages(results[i]) { stored[message.id] = message }
        }
        var commit: LocalFanoutGate.Commit?
        if let positions, let first = stored.values.map(\.seq).min(), let last = stored.values.map(\.seq).max() {
            let logs = results[positions]
            commit = LocalFanoutGate.Commit(firstSeq: first, lastSeq: last, messagesBefore: logs.int64(0, 0) ?? 0,
                                            accessThrough: logs.int64(0, 1) ?? 0, tokenThrough: logs.int64(0, 2) ?? 0)
        }
        return CommittedSends(messages: sends.map { stored[$0.id] }, commit: commit)
    }

    /// One sender's rows for `jsonb_to_recordset`, written straight into bytes (this runs for
    /// every batch on the worker that commits it; JSONSerialization of dictionaries cost more
    /// per send than the insert). Absent values are null.
    static func sendRows(_ sends: [PendingSend]) -> String {
        var out: [UInt8] = [UInt8(ascii: "[")]
        out.reserveCapacity(64 + sends.count * 320)
        func key(_ name: StaticString) {
            out.append(UInt8(ascii: ","))
            out.append(UInt8(ascii: "\""))
            name.withUTF8Buffer { out.append(contentsOf: $0) }
            out.append(UInt8(ascii: "\""))
            out.append(UInt8(ascii: ":"))
        }
        func string(_ s: String?) {
            if let s { JSONBytes.appendString(s, to: &out) } else { out += Array("null".utf8) }
        }
        func int(_ n: Int?) {
            if let n { JSONBytes.appendInt(n, to: &out) } else { out += Array("null".utf8) }
        }
        func strings(_ list: [String]?) {
            guard let list else { return out += Array("null".utf8) }
            out.append(UInt8(ascii: "["))
            for (i, s) in list.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                JSONBytes.appendString(s, to: &out)
            }
            out.append(UInt8(ascii: "]"))
        }
        for (ord, s) in sends.enumerated() {
            let r = s.request
            if ord > 0 { out.append(UInt8(ascii: ",")) }
            out += Array(#"{"ord":"#.utf8)
            JSONBytes.appendInt(ord, to: &out)
            key("id"); JSONBytes.appendUUID(s.id, to: &out)
            key("event_id"); JSONBytes.appendUUID(r.eventID, to: &out)
            key("force"); out += Array((r.force ? "true" : "false").utf8)
            // null: the template's teams (`teams` absent from a send by template; TemplateUse.ownTeams).
            key("teams"); strings(r.template.map { !$0.ownTeams && r.teams.isEmpty } == true ? nil : r.teams)
            key("poll"); strings(r.poll?.options)
            key("escalate_after"); int(r.escalateAfterMinutes)
            if let use = r.template {
                // By template: its text, and its defaults where the send says nothing (SQL in sendBatch).
                key("template"); string(use.name)
                key("message"); string(nil)
                key("message_type"); string(use.messageType?.rawValue)
                key("priority"); string(use.priority?.rawValue)
                key("expires_in"); int(use.expiresInMinutes)
                key("emergency_default"); int(use.emergencyEscalationDefault)
            } else {
                key("message"); string(r.message)
                key("message_type"); string(r.messageType.rawValue)
                key("priority"); string(r.priority.rawValue)
                key("expires_in"); int(r.expiresInMinutes)
            }
            out.append(UInt8(ascii: "}"))
        }
        out.append(UInt8(ascii: "]"))
        return String(decoding: out, as: UTF8.self)
    }

    struct DuplicateKey: Hashable {
        var event: UUID
        var text: String
    }

    /// The advisory lock that orders inserts into staff_messages (`staffcast_serialize_log('1')`).
    /// These numbers are written in SQL too: sql/014's `staffcast_serialize_log` and sql/015's
    /// `staffcast_begin_send_batch`.
    static let messageLogLock = (7_354_000, 1)
    /// The lock every writer of access_changes or token_changes takes before its log's own
    /// (sql/014); a send batch takes it shared (sql/015).
    static let accessTokenGate = (7_354_000, 0)

    /// SQL that is true when `text` went to `event` within `window` minutes (0: never) and was
    /// not retracted (the double-send guard): `staffcast_duplicate_exists` (sql/013), which asks
    /// `staffcast_duplicate_ords` (sql/015): one probe of `staff_messages_duplicate_key` with
    /// the sender's access checked once, not one row-level-security call per message of the window.
    static func duplicateExists(event: String, text: String, window: String, excluding: String? = nil) -> String {
        "staffcast_duplicate_exists(\(event), \(text), \(window), \(excluding ?? "NULL::uuid[]"))"
    }

    /// The `conflict` a guarded send gets.
    static func duplicateRefused(window: Int) -> StaffcastError {
        StaffcastError(.conflict, "The same message went to this event less than \(window) minutes ago; nothing was sent. Send it with force (staffcast send --force) if it really should go out twice.")
    }
}
