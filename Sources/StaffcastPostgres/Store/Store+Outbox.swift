import Foundation
import StaffcastCore

/// The durable outbox (sql/012_reach.sql), as the server's own login. Passes claim rows with
/// `FOR UPDATE SKIP LOCKED` and a lease, so with several servers each row is worked on by one
/// at a time, and a row leased by a server that died is due again when its lease runs out.
extension Store {
    /// Turns committed messages past `fanout_cursor` (sql/013) into push and email rows, records
    /// who was live and moves the cursor on, at most `limit` messages a pass, in one transaction.
    /// While another server holds the cursor this pass expands nothing (it returns 0). Push goes to each audience
    /// member's subscriptions unless they were subscribed to the event on some server (presence),
    /// and to everyone for urgent or emergency messages; email (when `emailAfterSeconds` is set)
    /// to each audience member with an address, for urgent or emergency messages, due that long
    /// after the send. Returns how many messages were expanded.
    public func expandFanouts(emailAfterSeconds: Int?, limit: Int = 200) throws -> Int {
        try conn.transaction { tx in
            let cursor = try tx.query("SELECT seq FROM fanout_cursor FOR UPDATE SKIP LOCKED")
            guard let after = cursor.int64(0, 0) else { return 0 }
            // seq is commit order: nothing can still commit before the last message read here.
            let due = try tx.query("SELECT m.seq, m.id FROM staff_messages m WHERE m.seq > $1 ORDER BY m.seq LIMIT $2",
                                   [String(after), String(limit)])
            guard due.rowCount > 0, let last = due.int64(due.rowCount - 1, 0) else { return 0 }
            let messages = Self.arrayLiteral((0..<due.rowCount).compactMap { due.uuid($0, 1) })
            // Those subscribed to the event on some server (presence, refreshed every 3 s) got it live.
            // Each statement first keeps only the messages of events where it can find anyone
            // (someone present; someone with a push subscription): the audience of a message is
            // computed per message (~0.2 ms), and a backlog of 50,000 messages to an event where
            // nobody uses push cost PostgreSQL ~17 s for no row (the bench's catch-up).
            try tx.query("""
                INSERT INTO message_reach (message_id, user_id, via, at)
                SELECT DISTINCT m.id, a.user_id, 'live', m.sent_at
                FROM staff_messages m CROSS JOIN LATERAL staffcast_message_audience(m.id) a
                WHERE m.id = ANY ($1::uuid[])
                  AND EXISTS (SELECT 1 FROM presence p0 WHERE p0.event_id = m.event_id
                              AND p0.seen_at > now() - interval '\(Self.presenceFreshSeconds) seconds')
                  AND EXISTS (SELECT 1 FROM presence p WHERE p.event_id = m.event_id AND p.user_id = a.user_id
                              AND p.seen_at > now() - interval '\(Self.presenceFreshSeconds) seconds')
                ON CONFLICT DO NOTHING
                """, [messages])
            try tx.query("""
                INSERT INTO outbox (kind, event_id, message_id, user_id, subscription_id, give_up_at, urgency)
                SELECT 'push', m.event_id, m.id, s.user_id, s.id,
                       least(coalesce(m.expires_at, 'infinity'), m.sent_at + interval '1 day'),
                       CASE WHEN m.priority = 'urgent' OR m.message_type = 'emergency' THEN 0 ELSE 1 END
                FROM staff_messages m CROSS JOIN LATERAL staffcast_message_audience(m.id) a
                JOIN push_subscriptions s ON s.user_id = a.user_id AND staffcast_push_token_valid(s.user_id, s.token_hash)
                WHERE m.id = ANY ($1::uuid[]) AND m.retracted_at IS NULL
                  AND (m.expires_at IS NULL OR m.expires_at > now())
                  AND EXISTS (SELECT 1 FROM push_subscriptions s0 JOIN event_access a0 ON a0.user_id = s0.user_id
                              WHERE a0.event_id = m.event_id)
                  AND (m.priority = 'urgent' OR m.message_type = 'emergency'
                       OR NOT EXISTS (SELECT 1 FROM presence p WHERE p.event_id = m.event_id AND p.user_id = a.user_id
                                      AND p.seen_at > now() - interval '\(Self.presenceFreshSeconds) seconds'))
                ORDER BY m.seq, s.id
                ON CONFLICT DO NOTHING
                """, [messages])
            if let emailAfterSeconds {
                try tx.query("""
                    INSERT INTO outbox (kind, event_id, message_id, user_id, next_attempt_at, urgency, give_up_at)
                    SELECT 'email', m.event_id, m.id, a.user_id, m.sent_at + make_interval(secs => $2::int), 0,
                           least(coalesce(m.expires_at, 'infinity'), m.sent_at + make_interval(secs => $2::int) + interval '6 hours')
                    FROM staff_messages m CROSS JOIN LATERAL staffcast_message_audience(m.id) a
                    JOIN profiles p ON p.id = a.user_id AND p.email IS NOT NULL
                    WHERE m.id = ANY ($1::uuid[]) AND (m.priority = 'urgent' OR m.message_type = 'emergency')
                    ORDER BY m.seq, a.user_id
                    ON CONFLICT DO NOTHING
                    """, [messages, String(emailAfterSeconds)])
            }
            try tx.query("UPDATE fanout_cursor SET seq = $1", [String(last)])
            return due.rowCount
        }
    }

    /// Claims up to `limit` due deliveries, those of urgent and emergency messages first (a
    /// webhook's only while none before it is pending: in order per webhook; a correction's only
    /// while no earlier push or email of its message to its subscription or person is pending)
    /// and leases them to `node` for `leaseSeconds`. An email whose message was read, retracted
    /// or expired meanwhile, or a correction not owed (sql/021), is marked skipped instead of returned.
    public func claimDeliveries(node: String, limit: Int, leaseSeconds: Int = 60) throws -> [OutboxItem] {
        guard limit > 0 else { return [] }
        return try conn.transaction { tx in
            let r = try tx.query("""
                WITH due AS (
                    SELECT o.id FROM outbox o
                    WHERE o.status = 'pending' AND o.kind <> 'fanout' AND o.next_attempt_at <= now()
                      AND (o.lease_until IS NULL OR o.lease_until < now())
                      AND (o.kind <> 'webhook' OR NOT EXISTS (
                            SELECT 1 FROM outbox b WHERE b.kind = 'webhook' AND b.status = 'pending'
                              AND b.webhook_id = o.webhook_id AND b.id < o.id))
                      -- A correction waits for what went before it to the same phone or
                      -- person; the kinds are literals so that each probe uses its index
                      -- (outbox_push_once_per_change, outbox_email_once_per_change).
                      AND (o.correction_seq IS NULL OR o.kind <> 'push' OR NOT EXISTS (
                            SELECT 1 FROM outbox b WHERE b.kind = 'push' AND b.status = 'pending' AND b.message_id = o.message_id
                              AND b.subscription_id = o.subscription_id AND b.id < o.id))
                      AND (o.correction_seq IS NULL OR o.kind <> 'email' OR NOT EXISTS (
                            SELECT 1 FROM outbox b WHERE b.kind = 'email' AND b.status = 'pending' AND b.message_id = o.message_id
                              AND b.user_id = o.user_id AND b.id < o.id))
                    ORDER BY o.urgency, o.next_attempt_at, o.id
                    LIMIT $1
                    FOR UPDATE SKIP LOCKED)
                UPDATE outbox o SET lease_until = now() + make_interval(secs => $3::int), leased_by = $2,
                                    attempts = o.attempts + 1,
                                    -- What it shows, at the latest (the message is read after this).
                                    shown_change_seq = CASE WHEN o.kind <> 'webhook' THEN coalesce(
                                        (SELECT max(c.seq) FROM message_changes c WHERE c.message_id = o.message_id), 0) END
                FROM due WHERE o.id = due.id
                RETURNING o.id, o.kind, o.delivery_id, o.attempts, \(Self.epochMicros("o.give_up_at")),
                          o.event_id, o.user_id, o.message_id, o.subscription_id, o.webhook_id, o.change_type, o.payload,
                          o.correction_seq
                """, [String(limit), node, String(leaseSeconds)])
            var items: [OutboxItem] = []
            for i in 0..<r.rowCount {
                guard let id = r.int64(i, 0), let kind = r.string(i, 1).flatMap(DeliveryKind.init),
                      let delivery = r.uuid(i, 2), let giveUp = r.date(i, 4) else { continue }
                let user = r.uuid(i, 6), message = r.uuid(i, 7)
                // A correction row (sql/021) names its change in change_type and correction_seq.
                let correction = r.int64(i, 12).map { seq in (seq: seq, kind: r.string(i, 10).flatMap(Correction.init) ?? .updated) }
                if let correction, try !correctionOwed(tx, row: id, kind: kind, message: message, subscription: r.uuid(i, 8),
                                                        user: user, seq: correction.seq) {
                    try skip(tx, id, because: "no correction owed (the original was not delivered here, or this text was already shown)")
                    continue
                }
                let target: OutboxItem.Target?
                switch kind {
                case .push:
                    target = try pushTarget(tx, subscription: r.uuid(i, 8), user: user, message: message, correction: correction?.kind)
                case .email:
                    target = try emailTarget(tx, user: user, message: message, correction: correction?.kind)
                case .webhook:
                    target = try webhookTarget(tx, webhook: r.uuid(i, 9), changeType: r.string(i, 10), payload: r.string(i, 11))
                }
                guard let target else {
                    try skip(tx, id, because: "nothing left to deliver (read, retracted, expired or removed)")
                    continue
                }
                items.append(OutboxItem(id: id, kind: kind, deliveryID: delivery, attempts: r.int(i, 3) ?? 1, giveUpAt: giveUp,
                                        eventID: r.uuid(i, 5), userID: user, messageID: message, target: target))
            }
            return items
        }
    }

    private func skip(_ tx: PGConnection, _ id: Int64, because reason: String) throws {
        try tx.query("UPDATE outbox SET status = 'skipped', done_at = now(), lease_until = NULL, last_error = $2 WHERE id = $1",
                     [String(id), reason])
    }

    /// Whether the correction row `row` (change `seq` of `message`) is owed: an earlier push of
    /// the message to that subscription (email to that person) was delivered, and none delivered
    /// showed this change already (sql/021). Nobody who never got the original gets it.
    private func correctionOwed(_ tx: PGConnection, row: Int64, kind: DeliveryKind, message: UUID?, subscription: UUID?,
                                user: UUID?, seq: Int64) throws -> Bool {
        guard let message, let to = kind == .push ? subscription : user else { return false }
        let same = kind == .push ? "b.subscription_id = $2" : "b.user_id = $2"
        let r = try tx.query("""
            SELECT EXISTS (SELECT 1 FROM outbox b WHERE b.kind = $4 AND b.message_id = $1 AND \(same)
                             AND b.status = 'done' AND b.id < $3)
               AND NOT EXISTS (SELECT 1 FROM outbox b WHERE b.kind = $4 AND b.message_id = $1 AND \(same)
                                 AND b.status = 'done' AND b.shown_change_seq >= $5)
            """, [Self.id(message), Self.id(to), String(row), kind.rawValue, String(seq)])
        return r.bool(0, 0) == true
    }

    /// The message as `user` sees it, if it still counts (not retracted, not expired); with
    /// `retracted`, the retracted message as it was (what its withdrawal notice names).
    private func liveMessage(_ tx: PGConnection, _ message: UUID, reader: UUID, retracted: Bool = false) throws -> StaffMessage? {
        let r = try tx.query("""
            SELECT \(Self.messageColumns(reader: "$2")) FROM staff_messages m JOIN profiles p ON p.id = m.sender_id
            WHERE m.id = $1 AND \(retracted ? "m.retracted_at IS NOT NULL" : Self.unexpired)
            """, [Self.id(message), Self.id(reader)])
        return try Self.messages(r).first
    }

    /// The text a recipient was last shown of a message: the text before the first change
    /// after what their last delivered row showed (`shown_change_seq`). A withdrawal notice names
    /// that, not an edit that never reached them (edited, then retracted before the correction
    /// went). `kind` and `column` are this file's constants.
    private func lastShownText(_ tx: PGConnection, _ message: UUID, kind: String, column: String, recipient: UUID) throws -> String? {
        try tx.query("""
            SELECT c.old_message FROM message_changes c
            WHERE c.message_id = $1 AND c.seq > coalesce((
                SELECT max(o.shown_change_seq) FROM outbox o
                WHERE o.kind = '\(kind)' AND o.message_id = $1 AND o.\(column) = $2 AND o.status = 'done'), 0)
            ORDER BY c.seq LIMIT 1
            """, [Self.id(message), Self.id(recipient)]).string(0, 0)
    }

    private func pushTarget(_ tx: PGConnection, subscription: UUID?, user: UUID?, message: UUID?,
                            correction: Correction?) throws -> OutboxItem.Target? {
        guard let subscription, let user, let message,
              var m = try liveMessage(tx, message, reader: user, retracted: correction == .retracted) else { return nil }
        if correction == .retracted {
            m.message = try lastShownText(tx, message, kind: "push", column: "subscription_id", recipient: subscription) ?? m.message
        }
        // Still in the audience: access may have been revoked since the push was queued.
        guard try tx.query("SELECT 1 FROM staffcast_message_audience($1) a WHERE a.user_id = $2",
                           [Self.id(message), Self.id(user)]).rowCount == 1 else { return nil }
        // Still registered by a valid token (sql/019): an expired one ends its subscriptions.
        let s = try tx.query("""
            SELECT endpoint, p256dh, auth, encode(token_hash, 'hex') FROM push_subscriptions
            WHERE id = $1 AND staffcast_push_token_valid(user_id, token_hash)
            """, [Self.id(subscription)])
        guard s.rowCount == 1, let endpoint = s.string(0, 0), let p256dh = s.string(0, 1), let auth = s.string(0, 2) else {
            return nil
        }
        return .push(subscriptionID: subscription, endpoint: endpoint, p256dh: p256dh, auth: auth,
                     token: s.string(0, 3).flatMap { TokenDigest(hex: $0) }, message: m, correction: correction)
    }

    /// An email, unless its message was read meanwhile; a correction goes though it was read
    /// (the email they acted on said otherwise).
    private func emailTarget(_ tx: PGConnection, user: UUID?, message: UUID?, correction: Correction?) throws -> OutboxItem.Target? {
        guard let user, let message, var m = try liveMessage(tx, message, reader: user, retracted: correction == .retracted),
              correction != nil || !m.read else { return nil }
        if correction == .retracted {
            m.message = try lastShownText(tx, message, kind: "email", column: "user_id", recipient: user) ?? m.message
        }
        // Still in the audience (access may have been revoked since), with an address.
        let p = try tx.query("""
            SELECT p.email, p.display_name, e.name FROM profiles p, events e
            WHERE p.id = $1 AND e.id = $2 AND p.email IS NOT NULL
              AND EXISTS (SELECT 1 FROM staffcast_message_audience($3) a WHERE a.user_id = p.id)
            """, [Self.id(user), Self.id(m.eventID), Self.id(message)])
        guard p.rowCount == 1, let address = p.string(0, 0) else { return nil }
        return .email(address: address, displayName: p.string(0, 1) ?? "", eventName: p.string(0, 2) ?? "", message: m,
                      correction: correction)
    }

    private func webhookTarget(_ tx: PGConnection, webhook: UUID?, changeType: String?, payload: String?) throws -> OutboxItem.Target? {
        guard let webhook, let payload else { return nil }
        let w = try tx.query("SELECT url, secret FROM webhooks WHERE id = $1", [Self.id(webhook)])
        guard w.rowCount == 1, let url = w.string(0, 0), let secret = w.string(0, 1) else { return nil }
        return .webhook(webhookID: webhook, url: url, secret: secret, changeType: changeType ?? "", payload: payload)
    }

    /// What became of one attempt, as the outbox records it.
    public enum Recorded: Sendable, Equatable {
        case delivered
        /// The push subscription is gone (404/410): it is deleted, with its pending pushes.
        case gone
        case retry(at: Date, error: String)
        case failed(error: String)
    }

    /// Records the end of an attempt at `item`: done (and the funnel's push/email reach), a
    /// retry at its time, a failure, or a gone subscription; a webhook attempt is also listed.
    /// The row changes only while `node` still holds its lease: an outcome recorded late (kept
    /// while the database was down) must not overwrite a row another server has claimed since.
    /// Returns whether the row changed (the reach and the webhook attempt are written anyway:
    /// they say what happened).
    @discardableResult
    public func recordAttempt(_ item: OutboxItem, _ recorded: Recorded, statusCode: Int?, node: String) throws -> Bool {
        try conn.transaction { tx in
            let id = String(item.id)
            let held = "WHERE id = $1 AND leased_by = $2 AND status = 'pending' RETURNING id" // $1 id, $2 node
            let changed: Bool
            switch recorded {
            case .delivered:
                changed = try tx.query("UPDATE outbox SET status = 'done', done_at = now(), lease_until = NULL, last_error = NULL \(held)",
                                       [id, node]).rowCount > 0
                if let message = item.messageID, let user = item.userID, item.kind != .webhook {
                    try tx.query("""
                        INSERT INTO message_reach (message_id, user_id, via) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING
                        """, [Self.id(message), Self.id(user), item.kind.rawValue])
                }
            case .gone:
                if case .push(let subscription, _, _, _, _, _, _) = item.target {
                    try tx.query("DELETE FROM push_subscriptions WHERE id = $1", [Self.id(subscription)])
                }
                changed = try tx.query("UPDATE outbox SET status = 'failed', done_at = now(), lease_until = NULL, last_error = 'gone' \(held)",
                                       [id, node]).rowCount > 0
            case .retry(let at, let error):
                changed = try tx.query("""
                    UPDATE outbox SET next_attempt_at = to_timestamp($3::float8), lease_until = NULL, last_error = left($4, 500)
                    \(held)
                    """, [id, node, String(at.timeIntervalSince1970), error]).rowCount > 0
            case .failed(let error):
                changed = try tx.query("""
                    UPDATE outbox SET status = 'failed', done_at = now(), lease_until = NULL, last_error = left($3, 500) \(held)
                    """, [id, node, error]).rowCount > 0
            }
            if case .webhook(let webhook, _, _, let changeType, _) = item.target, let event = item.eventID {
                let outcome: String, error: String?
                switch recorded {
                case .delivered: (outcome, error) = ("delivered", nil)
                case .retry(_, let e): (outcome, error) = ("retry", e)
                case .failed(let e): (outcome, error) = ("failed", e)
                case .gone: (outcome, error) = ("failed", "gone")
                }
                try tx.query("""
                    INSERT INTO webhook_attempts (webhook_id, event_id, delivery_id, change_type, attempt, status_code, error, outcome)
                    VALUES ($1, $2, $3, $4, $5, $6, left($7, 500), $8)
                    """, [Self.id(webhook), Self.id(event), Self.id(item.deliveryID), changeType, String(item.attempts),
                          statusCode.map(String.init), error, outcome])
            }
            return changed
        }
    }

    /// Extends, to `leaseSeconds` from now, the leases `node` holds and that have not run out:
    /// a live server keeps what it claimed (in its delivery queue or in flight) however long
    /// that takes, and a server that died lets go within one lease. Returns the rows renewed.
    @discardableResult
    public func renewLeases(node: String, leaseSeconds: Int) throws -> [Int64] {
        let r = try conn.query("""
            UPDATE outbox SET lease_until = now() + make_interval(secs => $2::int)
            WHERE leased_by = $1 AND status = 'pending' AND lease_until > now()
            RETURNING id
            """, [node, String(leaseSeconds)])
        return (0..<r.rowCount).compactMap { r.int64($0, 0) }
    }

    /// Gives back the leases of claimed rows that were never attempted (a server stopping).
    public func releaseLeases(_ ids: [Int64], node: String) throws {
        guard !ids.isEmpty else { return }
        try conn.query("""
            UPDATE outbox SET lease_until = NULL, leased_by = NULL, attempts = greatest(attempts - 1, 0)
            WHERE id = ANY ($1::bigint[]) AND leased_by = $2 AND status = 'pending'
            """, ["{" + ids.map(String.init).joined(separator: ",") + "}", node])
    }

    /// Deletes finished outbox rows and webhook attempts older than `days` (the ticker's trim),
    /// and push subscriptions whose token expired (sql/019; a revoked one took them at once).
    @discardableResult
    public func pruneOutbox(days: Int = 7) throws -> Int {
        _ = try conn.query("DELETE FROM push_subscriptions s WHERE NOT staffcast_push_token_valid(s.user_id, s.token_hash)")
        let r = try conn.query("""
            WITH gone AS (DELETE FROM outbox WHERE status <> 'pending' AND done_at < now() - make_interval(days => $1::int) RETURNING 1)
            SELECT count(*) FROM gone
            """, [String(days)])
        _ = try conn.query("DELETE FROM webhook_attempts WHERE at < now() - make_interval(days => $1::int)", [String(days)])
        return r.int(0, 0) ?? 0
    }

    /// Pending outbox rows by kind (tests, status).
    public func pendingDeliveries() throws -> [String: Int] {
        let r = try conn.query("SELECT kind, count(*) FROM outbox WHERE status = 'pending' GROUP BY kind")
        var out: [String: Int] = [:]
        for i in 0..<r.rowCount { if let k = r.string(i, 0) { out[k] = r.int(i, 1) ?? 0 } }
        return out
    }
}
