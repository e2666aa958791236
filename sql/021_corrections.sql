-- A correction follows the message to where it reached people (docs/protocol.md, "Corrections
-- by push, email and webhook"). An edit or retract already reaches WebSocket subscribers and
-- catch-up (message_changes, sql/008); a phone that got the original by Web Push, a person who
-- got it by email and a system reading the `message` webhook learned nothing, so "Evacuate hall
-- B" corrected to "hall C" stayed "hall B" on the lock screen.
--
-- Push and email: each change of a message queues a correction row for every subscription (and
-- every person emailed) that was sent the message or still has it queued; the row says which
-- change it carries (correction_seq, the message_changes seq). Whether it is still owed is
-- decided when it is claimed (Store.claimDeliveries): only if an earlier row of the same message
-- to the same subscription (person) was delivered, and none delivered showed this change yet
-- (shown_change_seq, set when a row is claimed: the message's last change then). A queued
-- original is never stale: it is read when claimed (retracted: skipped; edited: the new text).
-- A correction waits while an earlier row of its message to its subscription is pending, so the
-- push service gets it after the original (same Topic: it replaces one still undelivered).
--
-- Webhooks registered for "message" get `message_updated` and `message_retracted` after the
-- `message` delivery, in the same order per webhook.

ALTER TABLE outbox ADD COLUMN correction_seq bigint, ADD COLUMN shown_change_seq bigint;

-- Once per message and subscription (person) as before, and once more per change.
CREATE UNIQUE INDEX outbox_push_once_per_change ON outbox (message_id, subscription_id, coalesce(correction_seq, 0))
    WHERE kind = 'push';
CREATE UNIQUE INDEX outbox_email_once_per_change ON outbox (message_id, user_id, coalesce(correction_seq, 0))
    WHERE kind = 'email';
DROP INDEX outbox_push_once;
DROP INDEX outbox_email_once;

-- The Message object of a webhook (sql/018's `message` delivery), for `message_updated` too.
CREATE FUNCTION staffcast_webhook_message(m staff_messages, sender_name text) RETURNS jsonb
LANGUAGE sql STABLE SET search_path = public, pg_temp AS $$
    SELECT jsonb_build_object(
        'id', m.id, 'seq', m.seq, 'event_id', m.event_id, 'sender_id', m.sender_id,
        'sender_name', sender_name, 'message', m.message, 'message_type', m.message_type,
        'priority', m.priority, 'sent_at', staffcast_rfc3339(m.sent_at),
        'expires_at', staffcast_rfc3339(m.expires_at), 'escalate_after_minutes', m.escalate_after_minutes,
        'teams', to_jsonb(m.teams),
        'poll', CASE WHEN m.poll_options IS NULL THEN NULL
                     ELSE jsonb_build_object('options', to_jsonb(m.poll_options)) END,
        'edited_at', staffcast_rfc3339(m.edited_at))
$$;
REVOKE ALL ON FUNCTION staffcast_webhook_message(staff_messages, text) FROM PUBLIC;

CREATE FUNCTION staffcast_outbox_after_change() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
    -- SKIP LOCKED: a subscription being deleted (a 410, a revoked token) gets no correction,
    -- and the change never waits for its lock (nor fails its foreign key once it is gone).
    INSERT INTO outbox (kind, event_id, message_id, user_id, subscription_id, change_type, correction_seq, give_up_at, urgency)
    SELECT 'push', c.event_id, c.message_id, s.user_id, s.id,
           CASE c.action WHEN 'edit' THEN 'message_updated' ELSE 'message_retracted' END, c.seq,
           least(coalesce(m.expires_at, 'infinity'), now() + interval '1 day'),
           CASE WHEN m.priority = 'urgent' OR m.message_type = 'emergency' THEN 0 ELSE 1 END
    FROM new_rows c JOIN staff_messages m ON m.id = c.message_id
    JOIN push_subscriptions s ON s.id IN (SELECT o.subscription_id FROM outbox o
                                          WHERE o.kind = 'push' AND o.message_id = c.message_id
                                            AND o.status IN ('pending', 'done'))
    ORDER BY c.seq, s.id
    FOR KEY SHARE OF s SKIP LOCKED;

    INSERT INTO outbox (kind, event_id, message_id, user_id, change_type, correction_seq, give_up_at, urgency)
    SELECT 'email', c.event_id, c.message_id, p.id,
           CASE c.action WHEN 'edit' THEN 'message_updated' ELSE 'message_retracted' END, c.seq,
           least(coalesce(m.expires_at, 'infinity'), now() + interval '6 hours'), 0
    FROM new_rows c JOIN staff_messages m ON m.id = c.message_id
    JOIN profiles p ON p.id IN (SELECT o.user_id FROM outbox o
                                WHERE o.kind = 'email' AND o.message_id = c.message_id
                                  AND o.status IN ('pending', 'done'))
    ORDER BY c.seq, p.id
    ON CONFLICT DO NOTHING;

    IF EXISTS (SELECT 1 FROM webhooks w WHERE w.event_id IN (SELECT c.event_id FROM new_rows c)
                                          AND 'message' = ANY (w.events)) THEN
        INSERT INTO outbox (kind, event_id, webhook_id, change_type, payload, give_up_at)
        SELECT 'webhook', w.event_id, w.id, d.type,
               jsonb_build_object('type', d.type, 'event_id', w.event_id, 'data', d.data)::text,
               now() + interval '24 hours'
        FROM new_rows c JOIN staff_messages m ON m.id = c.message_id JOIN profiles p ON p.id = m.sender_id
        CROSS JOIN LATERAL (SELECT
            CASE c.action WHEN 'edit' THEN 'message_updated' ELSE 'message_retracted' END AS type,
            CASE c.action
                WHEN 'edit' THEN staffcast_webhook_message(m, p.display_name) || jsonb_build_object('message', c.new_message)
                ELSE jsonb_build_object('message_id', m.id, 'event_id', m.event_id,
                                        'retracted_at', staffcast_rfc3339(coalesce(m.retracted_at, c.changed_at)))
            END AS data) d
        JOIN webhooks w ON w.event_id = c.event_id AND 'message' = ANY (w.events)
        ORDER BY c.seq, w.id;
    END IF;
    RETURN NULL;
END $$;
REVOKE ALL ON FUNCTION staffcast_outbox_after_change() FROM PUBLIC;
CREATE TRIGGER message_changes_outbox AFTER INSERT ON message_changes
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION staffcast_outbox_after_change();

-- A revoked token's subscriptions are deleted in id order (sql/019 left the order to the scan).
-- The fanout's foreign-key checks lock a person's subscriptions in id order too (it inserts
-- their pushes ORDER BY m.seq, s.id), so two of one token deleted in the other order could
-- deadlock a revoke with a fanout pass (each holding one subscription, waiting for the other).
CREATE OR REPLACE FUNCTION staffcast_push_after_token_end() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
    DELETE FROM push_subscriptions WHERE id IN (
        SELECT s.id FROM push_subscriptions s WHERE s.token_hash = NEW.token_hash ORDER BY s.id FOR UPDATE);
    DELETE FROM push_subscriptions WHERE id IN (
        SELECT s.id FROM push_subscriptions s WHERE s.user_id = NEW.user_id AND s.token_hash IS NULL
            AND NOT staffcast_push_token_valid(NEW.user_id, NULL) ORDER BY s.id FOR UPDATE);
    RETURN NULL;
END $$;
