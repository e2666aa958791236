import Foundation
import StaffcastCore

/// Scheduled sends (docs/protocol.md): stored as the organiser under row-level
/// security, listed and cancelled by the event's admins and owners, and sent by whichever
/// server's scheduler claims them first.
extension Store {
    static let scheduledColumns = """
        s.id, s.event_id, s.sender_id, s.message, s.message_type, s.priority, s.expires_in_minutes,
        \(epochMicros("s.send_at")), s.status, s.message_id, s.late, s.note,
        to_json(s.teams)::text
        """

    static func scheduled(_ r: PGResult) throws -> [ScheduledMessage] {
        try (0..<r.rowCount).map { i in
            guard let id = r.uuid(i, 0), let event = r.uuid(i, 1), let sender = r.uuid(i, 2),
                  let type = r.string(i, 4).flatMap(MessageType.init), let prio = r.string(i, 5).flatMap(Priority.init),
                  let sendAt = r.date(i, 7), let status = r.string(i, 8).flatMap(ScheduledMessage.Status.init) else {
                throw PostgresError(.unexpectedResult, "a scheduled_messages row could not be read")
            }
            var s = ScheduledMessage(id: id, eventID: event, senderID: sender, message: r.string(i, 3) ?? "",
                                     messageType: type, priority: prio, expiresInMinutes: r.int(i, 6), sendAt: sendAt,
                                     status: status, messageID: r.uuid(i, 9), late: r.bool(i, 10) ?? false, note: r.string(i, 11))
            s.teams = jsonStrings(r.string(i, 12))
            return s
        }
    }

    /// Stores a send with `request.schedule` for later, as `user` (admin or owner). The time
    /// is checked against the database's clock and the event's `starts_at`
    /// (`SendSchedule.resolve`): a past time, or `before_start` without a start, is `invalid`.
    public func schedule(as user: UUID, _ asked: SendRequest) throws -> ScheduledMessage {
        guard let schedule = asked.schedule else {
            throw StaffcastError(.internal, "The server asked to schedule a send that has no time.")
        }
        return try withAccess(user, asked.eventID) { tx, summary in
            guard summary.accessLevel.maySend else {
                throw StaffcastError.forbidden("Only admins and owners of an event may schedule sends to it; you are staff.")
            }
            // A template is resolved now: the scheduled send keeps the text it had when scheduled.
            var request = try resolvingTemplate(asked, in: tx)
            request.teams = try requireTeams(request.teams, event: request.eventID, in: tx)
            guard let now = try tx.query("SELECT \(Self.epochMicros("now()"))").date(0, 0) else {
                throw PostgresError(.unexpectedResult, "the database's clock could not be read")
            }
            let when = try schedule.resolve(eventStartsAt: summary.startsAt, now: now)
            let r = try tx.query("""
                INSERT INTO scheduled_messages AS s (event_id, sender_id, message, message_type, priority, expires_in_minutes, send_at,
                                                     teams, poll_options)
                VALUES ($1, $2, $3, $4, $5, $6::int, to_timestamp($7::float8), $8::text[], $9::text[])
                RETURNING \(Self.scheduledColumns)
                """, [Self.id(request.eventID), Self.id(user), request.message, request.messageType.rawValue,
                      request.priority.rawValue, request.expiresInMinutes.map(String.init),
                      String(when.timeIntervalSince1970), Self.textArray(request.teams),
                      request.poll.map { Self.textArray($0.options) }])
            guard let stored = try Self.scheduled(r).first else {
                throw PostgresError(.unexpectedResult, "the scheduled send was not returned")
            }
            return stored
        }
    }

    /// Every scheduled send of `event` (pending, sent and cancelled), by time; admins and owners only.
    public func scheduledSends(as user: UUID, event: UUID) throws -> [ScheduledMessage] {
        try withAccess(user, event) { tx, summary in
            guard summary.accessLevel.maySend else {
                throw StaffcastError.forbidden("Only admins and owners of the event see its scheduled sends.")
            }
            return try Self.scheduled(tx.query("""
                SELECT \(Self.scheduledColumns) FROM scheduled_messages s WHERE s.event_id = $1 ORDER BY s.send_at, s.id
                """, [Self.id(event)]))
        }
    }

    /// Cancels a pending scheduled send (admins and owners of its event). Cancelling one
    /// already cancelled returns it unchanged; one already sent is `invalid`.
    ///
    /// One the user may not see (staff, another event's organiser) is answered exactly like
    /// one that does not exist.
    public func cancelScheduled(as user: UUID, id: UUID) throws -> ScheduledMessage {
        let unseen = StaffcastError.notFound("There is no scheduled send with that id that you can see.")
        // As the user: row-level security shows the row to the event's admins and owners only.
        let event = try conn.transaction(asUser: user) { tx in
            try tx.query("SELECT event_id FROM scheduled_messages WHERE id = $1", [Self.id(id)]).uuid(0, 0)
        }
        guard let event else { throw unseen }
        return try withAccess(user, event) { tx, summary in
            guard summary.accessLevel.maySend else { throw unseen }
            let updated = try Self.scheduled(tx.query("""
                UPDATE scheduled_messages s SET status = 'cancelled', done_at = now()
                WHERE s.id = $1 AND s.status = 'pending' RETURNING \(Self.scheduledColumns)
                """, [Self.id(id)]))
            if let row = updated.first { return row }
            guard let row = try Self.scheduled(tx.query("SELECT \(Self.scheduledColumns) FROM scheduled_messages s WHERE s.id = $1",
                                                         [Self.id(id)])).first else {
                throw unseen
            }
            if row.status == .sent {
                throw StaffcastError.invalid("That scheduled send already went out as message \(row.messageID.map(Self.id) ?? "-"); retract the message instead.")
            }
            return row
        }
    }

    /// What one pass of a server's scheduler did.
    public struct DispatchResult: Sendable {
        public var sent: [ScheduledMessage] = []
        /// Cancelled with a note: their sender may no longer send to the event, or their teams
        /// were deleted or emptied since (`AudienceCheck`).
        public var dropped: [ScheduledMessage] = []
        /// More due rows may wait (the pass took its limit).
        public var more = false
    }

    /// Sends the scheduled rows that are due, at most `limit`, in one transaction: claimed with
    /// `FOR UPDATE SKIP LOCKED` (another server's scheduler skips them, and they are `sent`
    /// before the locks go: each is sent exactly once), each message inserted as its sender
    /// under row-level security, then the row marked `sent` (late when more than a minute after
    /// its time, `SendSchedule.isLate`). The message reaches subscribers through the change
    /// feed like any other. Runs as the server's own login, on a database worker.
    /// `emergencyEscalation`: the `escalate_after_minutes` a scheduled emergency gets (sql/007).
    public func dispatchDueScheduled(limit: Int = 100, emergencyEscalation: Int? = nil) throws -> DispatchResult {
        try conn.transaction { tx in
            let due = try Self.scheduled(tx.query("""
                SELECT \(Self.scheduledColumns) FROM scheduled_messages s
                WHERE s.status = 'pending' AND s.send_at <= now()
                ORDER BY s.send_at, s.id LIMIT $1 FOR UPDATE SKIP LOCKED
                """, [String(limit)]))
            var result = DispatchResult(more: due.count == limit)
            guard !due.isEmpty else { return result }
            guard let now = try tx.query("SELECT \(Self.epochMicros("now()"))").date(0, 0) else {
                throw PostgresError(.unexpectedResult, "the database's clock could not be read")
            }
            for row in due {
                // Its teams deleted or emptied since it was scheduled: cancelled, saying why (AudienceCheck).
                if let note = try audienceNote(row, in: tx) {
                    result.dropped.append(contentsOf: try cancelDue(row, note: note, in: tx))
                    continue
                }
                try tx.query("SET LOCAL ROLE staffcast_app")
                try tx.query("SELECT set_config('staffcast.user_id', $1, true)", [Self.id(row.senderID)])
                let inserted = try tx.query("""
                    INSERT INTO staff_messages (event_id, sender_id, message, message_type, priority, expires_at,
                                                escalate_after_minutes, teams, poll_options)
                    SELECT $1::uuid, $2::uuid, $3::text, $4::text, $5::text, now() + make_interval(mins => $6::int),
                           CASE WHEN $4::text = 'emergency' THEN $7::int END, $8::text[],
                           (SELECT s.poll_options FROM scheduled_messages s WHERE s.id = $9::uuid)
                    WHERE staffcast_has_access($1::uuid, ARRAY['admin','owner'])
                    RETURNING id
                    """, [Self.id(row.eventID), Self.id(row.senderID), row.message, row.messageType.rawValue,
                          row.priority.rawValue, row.expiresInMinutes.map(String.init),
                          emergencyEscalation.map(String.init), Self.textArray(row.teams), Self.id(row.id)]).uuid(0, 0)
                try tx.query("RESET ROLE")
                try tx.query("SELECT set_config('staffcast.user_id', '', true)")
                if let messageID = inserted {
                    let late = SendSchedule.isLate(sendAt: row.sendAt, sentAt: now)
                    let done = try Self.scheduled(tx.query("""
                        UPDATE scheduled_messages s SET status = 'sent', message_id = $2, late = $3, done_at = now()
                        WHERE s.id = $1 RETURNING \(Self.scheduledColumns)
                        """, [Self.id(row.id), Self.id(messageID), late ? "true" : "false"]))
                    result.sent.append(contentsOf: done)
                } else {
                    result.dropped.append(contentsOf: try cancelDue(row, note: "the sender may no longer send to this event", in: tx))
                }
            }
            return result
        }
    }

    /// Why the due `row` may not go (`AudienceCheck.scheduledNote`), read as the server's login.
    private func audienceNote(_ row: ScheduledMessage, in tx: PGConnection) throws -> String? {
        guard !row.teams.isEmpty else { return nil }
        let r = try tx.query("""
            SELECT to_json(ARRAY(SELECT n FROM unnest($2::text[]) n
                                 WHERE NOT EXISTS (SELECT 1 FROM teams t WHERE t.event_id = $1 AND t.name = n)))::text,
                   \(Self.someoneIn(teams: "$2::text[]", event: "$1::uuid", besides: "$3::uuid"))
            """, [Self.id(row.eventID), Self.textArray(row.teams), Self.id(row.senderID)])
        return AudienceCheck.scheduledNote(teams: row.teams, missing: Self.jsonStrings(r.string(0, 0)), anyoneThere: r.bool(0, 1) == true)
    }

    /// Marks the due `row` cancelled by the scheduler with `note`.
    private func cancelDue(_ row: ScheduledMessage, note: String, in tx: PGConnection) throws -> [ScheduledMessage] {
        try Self.scheduled(tx.query("""
            UPDATE scheduled_messages s SET status = 'cancelled', done_at = now(), note = $2
            WHERE s.id = $1 RETURNING \(Self.scheduledColumns)
            """, [Self.id(row.id), note]))
    }
}
