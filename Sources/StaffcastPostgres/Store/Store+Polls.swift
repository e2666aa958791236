import Foundation
import StaffcastCore

/// Poll answers (docs/protocol.md, Polls; sql/011): group-committed like reads, and the report
/// of who answered what.
extension Store {
    public struct PendingAnswer: Sendable, Equatable {
        public var user: UUID
        public var message: UUID
        public var option: Int
        public init(user: UUID, message: UUID, option: Int) {
            self.user = user
            self.message = message
            self.option = option
        }
    }

    /// Stores every answer its user may give, in one transaction (as the server's login, with
    /// the access check explicit: the user's access to the message's event and its audience,
    /// as row-level security would decide), logs each for live tallies, and marks the message
    /// read for them. For each: the message's event, or the error it gets (nothing stored).
    /// Several answers of one user to one message in a batch: the last one counts.
    public func answerBatch(_ answers: [PendingAnswer]) throws -> [Result<UUID, StaffcastError>] {
        guard !answers.isEmpty else { return [] }
        let users = "{" + answers.map { Self.id($0.user) }.joined(separator: ",") + "}"
        let messages = "{" + answers.map { Self.id($0.message) }.joined(separator: ",") + "}"
        var outcomes: [Result<UUID, StaffcastError>] = answers.map { .failure(.noSuchMessage($0.message)) }
        try conn.transaction { tx in
            // What each may answer: a poll of an event they are on, in its audience, not retracted.
            let r = try tx.query("""
                SELECT x.i, m.event_id, cardinality(m.poll_options), m.expires_at IS NOT NULL AND m.expires_at <= now()
                FROM unnest($1::uuid[], $2::uuid[]) WITH ORDINALITY AS x(user_id, message_id, i)
                JOIN staff_messages m ON m.id = x.message_id AND m.retracted_at IS NULL
                JOIN event_access a ON a.event_id = m.event_id AND a.user_id = x.user_id
                WHERE \(Self.messageIsFor(user: "x.user_id", level: "a.access_level"))
                """, [users, messages])
            var ok: [Int] = []
            for row in 0..<r.rowCount {
                guard let i = r.int(row, 0).map({ $0 - 1 }), answers.indices.contains(i), let event = r.uuid(row, 1) else { continue }
                guard let count = r.int(row, 2) else {
                    outcomes[i] = .failure(.invalid("That message is not a poll; mark it read or reply to it instead."))
                    continue
                }
                // An expired message is never shown again: its poll is closed, and a late answer
                // would change counts an organiser may already have reported.
                guard r.bool(row, 3) != true else {
                    outcomes[i] = .failure(.invalid("This poll has expired, so it takes no more answers. Nothing was stored."))
                    continue
                }
                guard answers[i].option < count else {
                    outcomes[i] = .failure(.invalid("option must be from 0 to \(count - 1) (the poll has \(count) options); got \(answers[i].option)."))
                    continue
                }
                outcomes[i] = .success(event)
                ok.append(i)
            }
            guard !ok.isEmpty else { return }
            // The last answer of a user to a message in this batch wins: "I am safe" then "I
            // need help" must store help. The query's rows come in no set order, so order them
            // as the answers arrived first.
            ok.sort()
            var last: [AnswerKey: Int] = [:]
            for i in ok { last[AnswerKey(user: answers[i].user, message: answers[i].message)] = i }
            let chosen = ok.filter { last[AnswerKey(user: answers[$0].user, message: answers[$0].message)] == $0 }
            let u = "{" + chosen.map { Self.id(answers[$0].user) }.joined(separator: ",") + "}"
            let m = "{" + chosen.map { Self.id(answers[$0].message) }.joined(separator: ",") + "}"
            let o = "{" + chosen.map { String(answers[$0].option) }.joined(separator: ",") + "}"
            let statements: [(sql: String, params: [String?])] = [
                ("""
                INSERT INTO poll_answers (message_id, user_id, event_id, option)
                SELECT x.message_id, x.user_id, m.event_id, x.option
                FROM unnest($1::uuid[], $2::uuid[], $3::int[]) AS x(user_id, message_id, option)
                JOIN staff_messages m ON m.id = x.message_id
                ON CONFLICT (message_id, user_id) DO UPDATE SET option = EXCLUDED.option, answered_at = now()
                """, [u, m, o]),
                ("""
                INSERT INTO poll_answer_log (message_id, event_id, user_id, option)
                SELECT x.message_id, m.event_id, x.user_id, x.option
                FROM unnest($1::uuid[], $2::uuid[], $3::int[]) WITH ORDINALITY AS x(user_id, message_id, option, i)
                JOIN staff_messages m ON m.id = x.message_id ORDER BY x.i
                """, [u, m, o]),
                // Answering marks read (sql/005: the mark, and read_by with exactly the new readers);
                // the first statement already kept only answers their users may give.
                (Self.markReads(), [u, m]),
            ]
            for s in statements { try tx.query(s.sql, s.params) }
        }
        return outcomes
    }

    private struct AnswerKey: Hashable {
        var user: UUID
        var message: UUID
    }

    /// Who answered what and who has not (admins and owners of the message's event).
    public func pollAnswers(as user: UUID, message: UUID) throws -> PollAnswers {
        let found = try conn.transaction(asUser: user) { tx in
            let r = try tx.query("SELECT event_id, to_json(poll_options)::text FROM staff_messages WHERE id = $1", [Self.id(message)])
            return r.uuid(0, 0).map { ($0, r.string(0, 1)) }
        }
        guard let (event, options) = found else { throw StaffcastError.noSuchMessage(message) }
        guard let options, options != "null" else {
            throw StaffcastError.invalid("That message is not a poll (send one with poll, e.g. staffcast send --poll \"Yes,No\").")
        }
        return try withAdminAccess(user, event, refusal: "Only admins and owners of the event may see a poll's answers.") { tx in
            // The audience (but the sender), as receipts count it (sql/011).
            let people = try tx.query("SELECT user_id, display_name FROM staffcast_receipts($1)", [Self.id(message)])
            let audience = (0..<people.rowCount).compactMap { i in
                people.uuid(i, 0).map { TeamMember(userID: $0, displayName: people.string(i, 1) ?? "") }
            }
            let r = try tx.query("""
                SELECT a.user_id, p.display_name, a.option, \(Self.epochMicros("a.answered_at"))
                FROM poll_answers a JOIN profiles p ON p.id = a.user_id WHERE a.message_id = $1
                """, [Self.id(message)])
            let answers = (0..<r.rowCount).compactMap { i -> PollAnswers.Answer? in
                guard let id = r.uuid(i, 0), let option = r.int(i, 2), let at = r.date(i, 3) else { return nil }
                return PollAnswers.Answer(userID: id, displayName: r.string(i, 1) ?? "", option: option, answeredAt: at)
            }
            return PollAnswers(messageID: message, options: Self.jsonStrings(options), answers: answers, audience: audience)
        }
    }

    /// SQL: the live tally of each poll answered after cursor `$1` (at most `$2` log rows),
    /// computed once per poll for the whole batch of answers, from the change feed's snapshot.
    /// The audience counted is who may still read it (for a targeted message, those in its
    /// audience who still have access), as receipts count it (sql/018).
    /// Counts come back as `{option: count}` (one grouped index scan per poll; a per-option
    /// subquery over generate_series was estimated so high that PostgreSQL JIT-compiled it:
    /// 300 ms on every read of the change feed).
    static let pollTallies = """
        WITH l AS (SELECT seq, message_id FROM poll_answer_log WHERE seq > $1 ORDER BY seq LIMIT $2),
             polls AS (SELECT message_id, max(seq) AS seq FROM l GROUP BY message_id)
        SELECT x.seq, m.id, m.event_id,
               (SELECT json_object_agg(z.option, z.n) FROM (SELECT a.option, count(*) AS n FROM poll_answers a
                                                            WHERE a.message_id = m.id GROUP BY a.option) z)::text,
               (SELECT count(*) FROM poll_answers a WHERE a.message_id = m.id),
               CASE WHEN cardinality(m.teams) > 0
                    THEN (SELECT count(*) FROM message_audience ma
                          JOIN event_access ea ON ea.event_id = m.event_id AND ea.user_id = ma.user_id
                          WHERE ma.message_id = m.id AND ma.user_id <> m.sender_id)
                    ELSE (SELECT count(*) FROM event_access ea WHERE ea.event_id = m.event_id AND ea.user_id <> m.sender_id) END,
               (SELECT max(seq) FROM l), (SELECT count(*) FROM l), cardinality(m.poll_options)
        FROM polls x JOIN staff_messages m ON m.id = x.message_id
        ORDER BY x.seq
        """

    /// `{"0": 3, "2": 1}` as counts per option of a poll with `options` options.
    static func tallyCounts(_ json: String?, options: Int) -> [Int] {
        var counts = [Int](repeating: 0, count: max(0, options))
        guard let json, let data = json.data(using: .utf8),
              let object = try? JSONDecoder().decode([String: Int].self, from: data) else { return counts }
        for (key, n) in object {
            if let i = Int(key), counts.indices.contains(i) { counts[i] = n }
        }
        return counts
    }
}
