import Foundation
import StaffcastCore

/// The change feed every server follows (see `ChangeListener`), as the server's own login.
extension Store {
    /// A targeted message's audience as `{id,…}` (NULL for a message to the whole event): one
    /// index range scan of message_audience, only for targeted messages.
    static let audienceColumn = """
        CASE WHEN cardinality(m.teams) > 0 THEN ARRAY(SELECT ma.user_id FROM message_audience ma WHERE ma.message_id = m.id)::text END
        """

    /// Where the logs end now; a server starts following from here.
    public func currentCursors() throws -> ChangeCursors {
        let r = try conn.query("""
            SELECT (SELECT coalesce(max(seq), 0) FROM staff_messages),
                   (SELECT coalesce(max(seq), 0) FROM notifications),
                   (SELECT coalesce(max(seq), 0) FROM access_changes),
                   (SELECT coalesce(max(seq), 0) FROM token_changes),
                   (SELECT coalesce(max(seq), 0) FROM message_changes),
                   (SELECT coalesce(max(seq), 0) FROM message_replies),
                   (SELECT coalesce(max(seq), 0) FROM message_reads),
                   (SELECT coalesce(max(seq), 0) FROM escalation_rounds),
                   (SELECT coalesce(max(seq), 0) FROM poll_answer_log)
            """)
        return ChangeCursors(message: r.int64(0, 0) ?? 0, notification: r.int64(0, 1) ?? 0, access: r.int64(0, 2) ?? 0,
                             token: r.int64(0, 3) ?? 0, read: r.int64(0, 6) ?? 0, round: r.int64(0, 7) ?? 0,
                             messageChange: r.int64(0, 4) ?? 0, reply: r.int64(0, 5) ?? 0, answer: r.int64(0, 8) ?? 0)
    }

    /// Everything committed after `cursors`, read from one snapshot, at most `limit` rows a log.
    ///
    /// Access and token changes are applied before messages and notifications, so messages are
    /// read only when this snapshot holds the whole access and token backlog: otherwise a
    /// message committed after a revoke could be handed on before the revoke (it waits for a
    /// later read, `hasMore` says so). The snapshot's statements go as one pipeline: one round
    /// trip per read of the logs. They are planned for the cursors they are given: a generic
    /// plan of "seq > $1" cannot know the cursor is at the end of the log, and took ~3 ms a
    /// statement instead of a few µs (pg_stat_statements, bench sendrate1).
    ///
    /// `logs`: the logs to read (`ChangeLogs.toRead(after:)`: those a NOTIFY named); access and
    /// token changes are always read. A log not read keeps its cursor.
    public func changes(after cursors: ChangeCursors, limit: Int = 1_000, logs: ChangeLogs = .all) throws -> ChangeBatch {
        let backlogDrained = """
            (SELECT count(*) FROM (SELECT 1 FROM access_changes WHERE seq > $3 LIMIT $2) x) < $2
            AND (SELECT count(*) FROM (SELECT 1 FROM token_changes WHERE seq > $4 LIMIT $2) y) < $2
            """
        let (access, tokens) = (String(cursors.access), String(cursors.token))
        let statements: [(log: ChangeLogs, sql: String, params: [String?])] = [
            (.access, "SELECT seq, event_id, user_id, access_level FROM access_changes WHERE seq > $1 ORDER BY seq LIMIT $2",
             [access, String(limit)]),
            // Each token change with the token's state now (in this snapshot): valid, or gone.
            (.token, """
            SELECT c.seq, encode(c.token_hash, 'hex'), c.user_id,
                   t.token_hash IS NOT NULL AND \(Self.tokenIsValid("t")), p.id, p.display_name,
                   \(Self.epochMicros("t.expires_at"))
            FROM token_changes c
            LEFT JOIN api_tokens t ON t.token_hash = c.token_hash
            LEFT JOIN profiles p ON p.id = t.user_id
            WHERE c.seq > $1 ORDER BY c.seq LIMIT $2
            """, [tokens, String(limit)]),
            // The message log by seq, expired or not, so the cursor passes every row; only
            // unexpired ones are handed on.
            (.message, """
            SELECT \(Self.messageColumns(reader: "NULL")), \(Self.unexpired), \(Self.audienceColumn)
            FROM staff_messages m JOIN profiles p ON p.id = m.sender_id
            WHERE m.seq > $1 AND \(backlogDrained) ORDER BY m.seq LIMIT $2
            """, [String(cursors.message), String(limit), access, tokens]),
            (.notification, """
            SELECT \(Self.notificationColumns) FROM notifications n
            WHERE n.seq > $1 AND \(backlogDrained) ORDER BY n.seq LIMIT $2
            """, [String(cursors.notification), String(limit), access, tokens]),
            // Edits and retracts (sql/008), each with the message as it is in this snapshot.
            (.messageChange, """
            SELECT \(Self.messageColumns(reader: "NULL")), c.seq, c.action, \(Self.audienceColumn)
            FROM message_changes c JOIN staff_messages m ON m.id = c.message_id JOIN profiles p ON p.id = m.sender_id
            WHERE c.seq > $1 AND \(backlogDrained) ORDER BY c.seq LIMIT $2
            """, [String(cursors.messageChange), String(limit), access, tokens]),
            // Replies (sql/008), each with its event's admins and owners in this snapshot.
            (.reply, """
            SELECT \(Self.replyColumns), r.seq,
                   ARRAY(SELECT a.user_id FROM event_access a
                         WHERE a.event_id = r.event_id AND a.access_level IN ('admin','owner'))::text
            FROM message_replies r JOIN profiles p ON p.id = r.user_id
            WHERE r.seq > $1 AND \(backlogDrained) ORDER BY r.seq LIMIT $2
            """, [String(cursors.reply), String(limit), access, tokens]),
            // Reads (receipts to admins), after the access backlog like messages.
            (.read, """
            SELECT r.seq, r.message_id, r.event_id, r.user_id, p.display_name, m.read_count
            FROM message_reads r JOIN profiles p ON p.id = r.user_id JOIN staff_messages m ON m.id = r.message_id
            WHERE r.seq > $1 AND \(backlogDrained) ORDER BY r.seq LIMIT $2
            """, [String(cursors.read), String(limit), access, tokens]),
            // Escalation rounds (reminders to non-readers), with their message.
            (.round, """
            SELECT \(Self.messageColumns(reader: "NULL")), e.seq, e.round, e.unread::text[]
            FROM escalation_rounds e JOIN staff_messages m ON m.id = e.message_id JOIN profiles p ON p.id = m.sender_id
            WHERE e.seq > $1 AND \(backlogDrained) ORDER BY e.seq LIMIT $2
            """, [String(cursors.round), String(limit), access, tokens]),
            // Poll answers (sql/011): one tally per poll answered since the cursor.
            (.answer, Self.pollTallies, [String(cursors.answer), String(limit)]),
        ]
        let chosen = statements.filter { logs.union(.gates).contains($0.log) }
        let results = try conn.pipelinedTransaction(chosen.map { ($0.sql, $0.params) }, mode: "REPEATABLE READ READ ONLY",
                                                    customPlans: true)
        var byLog: [ChangeLogs: PGResult] = [:]
        for (statement, result) in zip(chosen, results) { byLog[statement.log] = result }
        guard let a = byLog[.access], let t = byLog[.token] else {
            throw PostgresError(.unexpectedResult, "the change feed's snapshot lacks the access or token log")
        }
        let (m, n, c, rp) = (byLog[.message], byLog[.notification], byLog[.messageChange], byLog[.reply])
        let (reads, rounds, tallies) = (byLog[.read], byLog[.round], byLog[.answer])
        var batch = ChangeBatch(cursors: cursors)
        for i in 0..<a.rowCount {
            guard let seq = a.int64(i, 0), let event = a.uuid(i, 1), let user = a.uuid(i, 2) else { continue }
            batch.access.append(AccessChange(seq: seq, eventID: event, userID: user,
                                             level: a.string(i, 3).flatMap(AccessLevel.init)))
            batch.cursors.access = seq
        }
        for i in 0..<t.rowCount {
            guard let seq = t.int64(i, 0), let digest = t.string(i, 1).flatMap(TokenDigest.init(hex:)),
                  let user = t.uuid(i, 2) else {
                throw PostgresError(.unexpectedResult, "a token_changes row could not be read")
            }
            var identity: Identity?
            if t.bool(i, 3) == true, let owner = t.uuid(i, 4) {
                identity = Identity(userID: owner, displayName: t.string(i, 5) ?? "")
            }
            batch.tokens.append(TokenChange(seq: seq, digest: digest, userID: user, identity: identity,
                                            expiresAt: t.date(i, 6)))
            batch.cursors.token = seq
        }
        if let m {
            for (i, message) in try Self.messages(m).enumerated() {
                if m.bool(i, Self.messageColumnCount) == true { batch.messages.append(message) }
                if let audience = m.string(i, Self.messageColumnCount + 1) { batch.audiences[message.id] = Set(Self.uuidArray(audience)) }
                batch.cursors.message = message.seq
            }
        }
        if let n {
            batch.notifications = try Self.notifications(n)
            if n.rowCount > 0, let last = n.int64(n.rowCount - 1, 9) { batch.cursors.notification = last }
        }
        if let c {
            for (i, message) in try Self.messages(c).enumerated() {
                guard let seq = c.int64(i, Self.messageColumnCount),
                      let action = c.string(i, Self.messageColumnCount + 1).flatMap(MessageChange.Action.init) else { continue }
                if let audience = c.string(i, Self.messageColumnCount + 2) { batch.audiences[message.id] = Set(Self.uuidArray(audience)) }
                batch.messageChanges.append(MessageChange(seq: seq, action: action, messageID: message.id, eventID: message.eventID,
                                                          message: action == .edit ? message : nil))
                batch.cursors.messageChange = seq
            }
        }
        if let rp {
            for (i, reply) in try Self.replies(rp).enumerated() {
                guard let seq = rp.int64(i, 7) else { continue }
                let list = (rp.string(i, 8) ?? "{}").trimmingCharacters(in: CharacterSet(charactersIn: "{}"))
                let organisers = Set(list.split(separator: ",").compactMap { UUID(wireText: String($0)) })
                batch.replies.append((reply, organisers))
                batch.cursors.reply = seq
            }
        }
        if let reads {
            for i in 0..<reads.rowCount {
                guard let seq = reads.int64(i, 0), let message = reads.uuid(i, 1), let event = reads.uuid(i, 2),
                      let user = reads.uuid(i, 3) else { continue }
                batch.receipts.append(ReadReceipt(messageID: message, eventID: event, userID: user,
                                                  displayName: reads.string(i, 4) ?? "", readCount: reads.int(i, 5) ?? 0))
                batch.cursors.read = seq
            }
        }
        if let rounds {
            let k = Self.messageColumnCount
            for (i, message) in try Self.messages(rounds).enumerated() {
                guard let seq = rounds.int64(i, k) else { continue }
                batch.reminders.append(ReminderChange(seq: seq, round: rounds.int(i, k + 1) ?? 1,
                                                      unread: Self.uuidArray(rounds.string(i, k + 2)), message: message))
                batch.cursors.round = seq
            }
        }
        if let tallies {
            for i in 0..<tallies.rowCount {
                guard let message = tallies.uuid(i, 1), let event = tallies.uuid(i, 2) else { continue }
                let counts = Self.tallyCounts(tallies.string(i, 3), options: tallies.int(i, 8) ?? 0)
                batch.tallies.append(PollTally(messageID: message, eventID: event, counts: counts,
                                               answered: tallies.int(i, 4) ?? 0, audience: tallies.int(i, 5) ?? 0))
                if let last = tallies.int64(i, 6) { batch.cursors.answer = max(batch.cursors.answer, last) }
            }
        }
        // A full page of access or token changes held messages back: read again at once.
        let full = [m, n, c, rp, reads, rounds].contains { ($0?.rowCount ?? 0) == limit }
        batch.hasMore = a.rowCount == limit || t.rowCount == limit || full
            || ((tallies?.rowCount ?? 0) > 0 && tallies?.int(0, 7) == limit)
        return batch
    }
}
