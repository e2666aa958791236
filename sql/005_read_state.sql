-- Per-user read state, so that unread counts, "has this user read it" and receipts never
-- scan read_by arrays (issue 8). message_reads is the truth of who read what and when; its
-- primary key makes a mark idempotent under any concurrency. staff_messages.read_by stays
-- exact (the contract names it): it is appended to only with readers whose message_reads row
-- this very statement inserted, and read_count mirrors its length so that reading a message
-- never has to detoast a 10,000-element array.

CREATE TABLE message_reads (
    message_id uuid NOT NULL REFERENCES staff_messages(id) ON DELETE CASCADE,
    user_id    uuid NOT NULL,
    event_id   uuid NOT NULL,
    read_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (message_id, user_id)
);
-- A user's reads on one event: unread counts.
CREATE INDEX message_reads_user_event ON message_reads (user_id, event_id);

ALTER TABLE staff_messages ADD COLUMN read_count integer NOT NULL DEFAULT 0;
-- Messages one user sent on one event (an unread count leaves out one's own messages).
CREATE INDEX staff_messages_event_sender ON staff_messages (event_id, sender_id);

INSERT INTO message_reads (message_id, user_id, event_id, read_at)
    SELECT m.id, r.user_id, m.event_id, m.sent_at
    FROM staff_messages m, LATERAL (SELECT DISTINCT u AS user_id FROM unnest(m.read_by) u) r
    ON CONFLICT DO NOTHING;
UPDATE staff_messages m SET read_by = ARRAY(SELECT DISTINCT u FROM unnest(m.read_by) u)
    WHERE cardinality(read_by) > 0;
UPDATE staff_messages SET read_count = cardinality(read_by) WHERE cardinality(read_by) > 0;

ALTER TABLE message_reads ENABLE ROW LEVEL SECURITY;
ALTER TABLE message_reads FORCE ROW LEVEL SECURITY;
CREATE POLICY owner_all ON message_reads TO PUBLIC USING (current_user <> 'staffcast_app');
-- One's own reads; an event's admins and owners see everyone's (receipts).
CREATE POLICY read_own_or_event_reads ON message_reads FOR SELECT TO staffcast_app
    USING (user_id = staffcast_current_user()
           OR staffcast_has_access(event_id, ARRAY['admin','owner']));
-- A user marks only themself, only on a message of an event they can see, under that
-- message's own event.
CREATE POLICY mark_own_reads ON message_reads FOR INSERT TO staffcast_app
    WITH CHECK (user_id = staffcast_current_user()
                AND staffcast_has_access(event_id, ARRAY['staff','admin','owner'])
                AND event_id = (SELECT m.event_id FROM staff_messages m WHERE m.id = message_id));
GRANT SELECT, INSERT ON message_reads TO staffcast_app;
GRANT UPDATE (read_count) ON staff_messages TO staffcast_app;

-- A reader may only add themself to read_by, counted once; nothing else of a message may
-- change.
CREATE OR REPLACE FUNCTION staffcast_guard_read_by() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF current_user = 'staffcast_app' AND NOT (
        (NEW.read_by = OLD.read_by AND NEW.read_count = OLD.read_count)
        OR (NEW.read_by = array_append(OLD.read_by, staffcast_current_user())
            AND NEW.read_count = OLD.read_count + 1
            AND NOT (staffcast_current_user() = ANY (OLD.read_by)))) THEN
        RAISE EXCEPTION 'a user may only mark a message read for themself'
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    RETURN NEW;
END $$;

-- How many unexpired messages of p_event, not sent by p_user, p_user has not read: all of
-- the event's minus the user's own minus the ones the user read. Three index range scans,
-- none of them per message. Runs with the caller's rights (row-level security applies).
CREATE FUNCTION staffcast_unread_count(p_user uuid, p_event uuid) RETURNS bigint
LANGUAGE sql STABLE SET search_path = public, pg_temp AS $$
    SELECT (SELECT count(*) FROM staff_messages m
             WHERE m.event_id = p_event AND (m.expires_at IS NULL OR m.expires_at > now()))
         - (SELECT count(*) FROM staff_messages m
             WHERE m.event_id = p_event AND m.sender_id = p_user
               AND (m.expires_at IS NULL OR m.expires_at > now()))
         - (SELECT count(*) FROM message_reads r JOIN staff_messages m ON m.id = r.message_id
             WHERE r.user_id = p_user AND r.event_id = p_event AND m.sender_id <> p_user
               AND (m.expires_at IS NULL OR m.expires_at > now()))
$$;

-- Receipts of one message for an admin or owner of its event: everyone with access (but the
-- sender) and everyone who read it, with when. The access check is made once here, not once
-- per row by the policies (at 10,000 staff that per-row check was most of the time).
-- Returns no rows when the caller may not see receipts of that message.
CREATE FUNCTION staffcast_receipts(p_message uuid)
RETURNS TABLE (user_id uuid, display_name text, read_at timestamptz)
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    v_event  uuid;
    v_sender uuid;
BEGIN
    SELECT m.event_id, m.sender_id INTO v_event, v_sender FROM staff_messages m WHERE m.id = p_message;
    IF v_event IS NULL OR NOT staffcast_has_access(v_event, ARRAY['admin','owner']) THEN
        RETURN;
    END IF;
    -- The roster (but the sender) with each one's read, then readers who have no access any
    -- more: two index scans and hash joins, no de-duplication pass over 10,000 rows.
    RETURN QUERY
        SELECT w.id, w.display_name, w.read_at FROM (
            SELECT p.id, p.display_name, r.read_at
            FROM event_access a
            JOIN profiles p ON p.id = a.user_id
            LEFT JOIN message_reads r ON r.message_id = p_message AND r.user_id = a.user_id
            WHERE a.event_id = v_event AND a.user_id <> v_sender
            UNION ALL
            SELECT p.id, p.display_name, r.read_at
            FROM message_reads r
            JOIN profiles p ON p.id = r.user_id
            WHERE r.message_id = p_message
              AND (r.user_id = v_sender OR NOT EXISTS (SELECT 1 FROM event_access a
                                                       WHERE a.event_id = v_event AND a.user_id = r.user_id))
        ) w
        ORDER BY w.display_name, w.id;
END $$;
REVOKE ALL ON FUNCTION staffcast_receipts(uuid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION staffcast_receipts(uuid) TO staffcast_app;
