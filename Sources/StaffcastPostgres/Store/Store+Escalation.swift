import Foundation
import StaffcastCore

/// Reminders and escalation (sql/007): due rounds are claimed in the database with
/// `FOR UPDATE SKIP LOCKED`, so with several servers on one database each round runs on exactly
/// one of them, and since the state lives in `escalations` it survives any restart. Who is due
/// and what happens (`EscalationPolicy.decide`) is decided here in Swift; a round is recorded
/// by one SQL function in the same transaction (the server's login may not write notifications
/// or the audit log itself): its `escalation_rounds` row (read by every server's change feed,
/// which sends the `reminder` frames), one `escalation` notification per admin and owner, and
/// the audit entries. `UNIQUE (message_id, round)` makes a repeated round impossible.
extension Store {
    /// What one pass did to one escalating message.
    public struct EscalationStep: Sendable, Equatable {
        public var messageID: UUID
        public var eventID: UUID
        /// The round run, or nil when the escalation finished without one.
        public var round: Int?
        public var unread: [Receipts.Person]
        /// Why it finished (`all_read`, `max_rounds`, `expired`, `retracted`), nil while it goes on.
        public var finished: String?
    }

    /// Runs every due round (at most `limit` messages a pass) in one transaction, as the
    /// server's own login. Rows another server is working on are skipped, not waited for.
    public func runDueEscalations(policy: EscalationPolicy, limit: Int = 50) throws -> [EscalationStep] {
        try conn.transaction { tx in
            let due = try tx.query("""
                SELECT e.message_id, e.event_id, e.rounds_done, e.audience::text[],
                       (m.expires_at IS NOT NULL AND m.expires_at <= now()), m.retracted_at IS NOT NULL,
                       m.message
                FROM escalations e JOIN staff_messages m ON m.id = e.message_id
                WHERE e.finished_at IS NULL
                  AND coalesce(e.last_round_at, m.sent_at)
                      + make_interval(secs => coalesce($1::int, m.escalate_after_minutes * 60)) <= now()
                ORDER BY coalesce(e.last_round_at, m.sent_at)
                LIMIT $2
                FOR UPDATE OF e SKIP LOCKED
                """, [policy.intervalSecondsOverride.map(String.init), String(limit)])
            var steps: [EscalationStep] = []
            for i in 0..<due.rowCount {
                guard let message = due.uuid(i, 0), let event = due.uuid(i, 1) else { continue }
                let audience = Self.uuidArray(due.string(i, 3))
                // Those who had access when it was sent, still have it, and have not read it.
                let u = try tx.query("""
                    SELECT p.id, p.display_name
                    FROM unnest($1::uuid[]) AS who(user_id)
                    JOIN event_access a ON a.event_id = $2 AND a.user_id = who.user_id
                    JOIN profiles p ON p.id = who.user_id
                    WHERE NOT EXISTS (SELECT 1 FROM message_reads r WHERE r.message_id = $3 AND r.user_id = who.user_id)
                    ORDER BY p.display_name, p.id
                    """, [Self.arrayLiteral(audience), Self.id(event), Self.id(message)])
                let unread = (0..<u.rowCount).compactMap { j in
                    u.uuid(j, 0).map { Receipts.Person(userID: $0, displayName: u.string(j, 1) ?? "") }
                }
                let decision = policy.decide(roundsDone: due.int(i, 2) ?? 0, unread: unread.map(\.userID),
                                             expired: due.bool(i, 4) ?? false, retracted: due.bool(i, 5) ?? false)
                switch decision {
                case .finish(let reason):
                    try tx.query("UPDATE escalations SET finished_at = now(), finished_reason = $2 WHERE message_id = $1",
                                 [Self.id(message), reason])
                    steps.append(EscalationStep(messageID: message, eventID: event, round: nil, unread: unread, finished: reason))
                case .round(let round, _, let last):
                    try runRound(tx, message: message, round: round, last: last, unread: unread,
                                 text: due.string(i, 6) ?? "", maxRounds: policy.maxRounds)
                    steps.append(EscalationStep(messageID: message, eventID: event, round: round, unread: unread,
                                                finished: last ? "max_rounds" : nil))
                }
            }
            return steps
        }
    }

    /// Records round `round` through `staffcast_record_escalation_round` (sql/007): the round
    /// (whose row the change feed turns into `reminder` frames), the escalation's new state, an
    /// `escalation` notification to each admin and owner, and the audit entries.
    private func runRound(_ tx: PGConnection, message: UUID, round: Int, last: Bool, unread: [Receipts.Person],
                          text: String, maxRounds: Int) throws {
        let names = unread.map(\.displayName)
        let shown = names.prefix(20).joined(separator: ", ") + (names.count > 20 ? " and \(names.count - 20) more" : "")
        let snippet = text.count > 80 ? String(text.prefix(79)) + "…" : text
        let body = "Round \(round) of \(maxRounds): \(names.count) \(names.count == 1 ? "person has" : "people have") not read \"\(snippet)\": \(shown)"
        let json = try EscalationNotice(messageID: message, round: round,
                                        unreadBy: unread.map { TeamMember(userID: $0.userID, displayName: $0.displayName) }).json()
        try tx.query("SELECT staffcast_record_escalation_round($1, $2, $3::uuid[], $4, $5, $6, $7::jsonb)",
                     [Self.id(message), String(round), Self.arrayLiteral(unread.map(\.userID)), last ? "true" : "false",
                      "Not read: \(snippet)", body, json])
    }

    /// The escalation state of one message, for tests and ops.
    public func escalationState(message: UUID) throws -> (roundsDone: Int, finished: String?)? {
        let r = try conn.query("SELECT rounds_done, finished_reason FROM escalations WHERE message_id = $1", [Self.id(message)])
        guard r.rowCount > 0 else { return nil }
        return (r.int(0, 0) ?? 0, r.string(0, 1))
    }
}
