-- Emergencies that must be read (issue 10, docs/protocol.md "Emergencies"): reach, live
-- receipts, reminders and escalation, and their audit trail.

-- A message may escalate: after this many minutes (and again each such interval) the staff who
-- had access when it was sent and have not read it are reminded, and the event's admins and
-- owners are told who. NULL: it never escalates. The server fills in the default for
-- emergencies (config `escalate_after_minutes`, 5).
ALTER TABLE staff_messages ADD COLUMN escalate_after_minutes integer
    CHECK (escalate_after_minutes BETWEEN 1 AND 1440);

-- One row per escalating message: who must read it (everyone with access when it was sent,
-- but the sender), how many rounds ran, and whether it is finished. Written in the send's own
-- transaction (trigger below), so a committed escalating message always has its row. Servers
-- claim due rows with FOR UPDATE SKIP LOCKED: each round runs on exactly one server, and the
-- state lives here, so it survives any restart.
CREATE TABLE escalations (
    message_id      uuid PRIMARY KEY REFERENCES staff_messages(id) ON DELETE CASCADE,
    event_id        uuid NOT NULL,
    audience        uuid[] NOT NULL,
    rounds_done     integer NOT NULL DEFAULT 0,
    last_round_at   timestamptz,
    finished_at     timestamptz,
    finished_reason text CHECK (finished_reason IN ('all_read', 'max_rounds', 'expired', 'retracted', 'no_audience'))
);
CREATE INDEX escalations_open ON escalations (message_id) WHERE finished_at IS NULL;

-- Every round that ran, in commit order: the change feed reads it by seq and sends `reminder`
-- frames to the named non-readers on every server. (message_id, round) is unique: a round can
-- never be recorded twice, whatever the servers do.
CREATE TABLE escalation_rounds (
    seq        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    message_id uuid NOT NULL REFERENCES staff_messages(id) ON DELETE CASCADE,
    event_id   uuid NOT NULL,
    round      integer NOT NULL CHECK (round >= 1),
    unread     uuid[] NOT NULL,
    at         timestamptz NOT NULL DEFAULT now(),
    UNIQUE (message_id, round)
);
CREATE TRIGGER escalation_rounds_serialize BEFORE INSERT ON escalation_rounds
    FOR EACH STATEMENT EXECUTE FUNCTION staffcast_serialize_log('7');
CREATE TRIGGER escalation_rounds_notify AFTER INSERT ON escalation_rounds
    FOR EACH STATEMENT EXECUTE FUNCTION staffcast_notify('round');

-- Reads become a change log too (live `receipt` frames to admins on every server): a seq in
-- commit order, and a wake-up after commit.
ALTER TABLE message_reads ADD COLUMN seq bigint GENERATED ALWAYS AS IDENTITY;
CREATE UNIQUE INDEX message_reads_seq ON message_reads (seq);
CREATE TRIGGER message_reads_serialize BEFORE INSERT ON message_reads
    FOR EACH STATEMENT EXECUTE FUNCTION staffcast_serialize_log('8');
CREATE TRIGGER message_reads_notify AFTER INSERT ON message_reads
    FOR EACH STATEMENT EXECUTE FUNCTION staffcast_notify('read');

-- When each user was last connected to each event (reach: "last seen"). Presence rows go
-- when a connection does; this stays. Written by the servers' presence refresh, at most about
-- every 20 s per user and event.
CREATE TABLE presence_seen (
    user_id  uuid NOT NULL,
    event_id uuid NOT NULL,
    seen_at  timestamptz NOT NULL,
    PRIMARY KEY (event_id, user_id)
);

-- Audit entries for sends, reads of emergency and urgent messages, reminders and escalations.
-- (Keeps every action 002, 004 and 006 allow.)
ALTER TABLE audit_log DROP CONSTRAINT audit_log_action_check;
ALTER TABLE audit_log ADD CONSTRAINT audit_log_action_check
    CHECK (action IN ('grant', 'revoke', 'token_issue', 'token_revoke', 'user_delete',
                      'message_send', 'message_read', 'reminder', 'escalation'));
CREATE INDEX audit_log_event ON audit_log (event_id, at DESC);

-- After a send (any path: group commit, one by one, admin tools): its escalation row, with the
-- audience as of this transaction, and its audit entry. One statement per INSERT statement.
CREATE FUNCTION staffcast_after_send() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
    INSERT INTO escalations (message_id, event_id, audience)
        SELECT n.id, n.event_id,
               ARRAY(SELECT a.user_id FROM event_access a
                     WHERE a.event_id = n.event_id AND a.user_id <> n.sender_id ORDER BY a.user_id)
        FROM new_rows n WHERE n.escalate_after_minutes IS NOT NULL;
    INSERT INTO audit_log (actor, action, event_id, user_id, detail)
        SELECT p.display_name, 'message_send', n.event_id, n.sender_id,
               n.message_type || '/' || n.priority || ' ' || n.id
               || CASE WHEN n.escalate_after_minutes IS NULL THEN ''
                       ELSE ' escalate_after=' || n.escalate_after_minutes || 'm' END
               || ': ' || left(n.message, 200)
        FROM new_rows n JOIN profiles p ON p.id = n.sender_id;
    RETURN NULL;
END $$;
CREATE TRIGGER staff_messages_after_send AFTER INSERT ON staff_messages
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION staffcast_after_send();

-- After reads: an audit entry for each read of an emergency or urgent message.
CREATE FUNCTION staffcast_after_read() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
    INSERT INTO audit_log (actor, action, event_id, user_id, detail)
        SELECT p.display_name, 'message_read', n.event_id, n.user_id,
               m.message_type || '/' || m.priority || ' ' || m.id
        FROM new_rows n
        JOIN staff_messages m ON m.id = n.message_id
        JOIN profiles p ON p.id = n.user_id
        WHERE m.message_type = 'emergency' OR m.priority = 'urgent'
        ORDER BY n.seq;
    RETURN NULL;
END $$;
CREATE TRIGGER message_reads_after_read AFTER INSERT ON message_reads
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION staffcast_after_read();

-- Row-level security: an event's admins and owners see its escalations, rounds and last-seen
-- times; a user sees the rounds that named them and their own last-seen rows. Nobody acting as
-- a user writes any of them (the server's own login and the triggers above do).
ALTER TABLE escalations       ENABLE ROW LEVEL SECURITY;
ALTER TABLE escalations       FORCE ROW LEVEL SECURITY;
ALTER TABLE escalation_rounds ENABLE ROW LEVEL SECURITY;
ALTER TABLE escalation_rounds FORCE ROW LEVEL SECURITY;
ALTER TABLE presence_seen     ENABLE ROW LEVEL SECURITY;
ALTER TABLE presence_seen     FORCE ROW LEVEL SECURITY;
CREATE POLICY owner_all ON escalations       TO PUBLIC USING (current_user <> 'staffcast_app');
CREATE POLICY owner_all ON escalation_rounds TO PUBLIC USING (current_user <> 'staffcast_app');
CREATE POLICY owner_all ON presence_seen     TO PUBLIC USING (current_user <> 'staffcast_app');
CREATE POLICY read_event_escalations ON escalations FOR SELECT TO staffcast_app
    USING (staffcast_has_access(event_id, ARRAY['admin','owner']));
CREATE POLICY read_event_rounds ON escalation_rounds FOR SELECT TO staffcast_app
    USING (staffcast_has_access(event_id, ARRAY['admin','owner'])
           OR (staffcast_current_user() = ANY (unread)
               AND staffcast_has_access(event_id, ARRAY['staff','admin','owner'])));
CREATE POLICY read_event_seen ON presence_seen FOR SELECT TO staffcast_app
    USING (user_id = staffcast_current_user() OR staffcast_has_access(event_id, ARRAY['admin','owner']));
GRANT SELECT ON escalations, escalation_rounds, presence_seen TO staffcast_app;

-- The server's own login (staffcast_server, sql/006) may: read the escalation state and the
-- rounds (the change feed), claim due escalations (FOR UPDATE needs UPDATE) and finish them,
-- and keep last-seen times. It records a round only through the function below, which writes
-- the round, the admins' notifications and the audit entries together, and only as the next
-- round of an unfinished escalation; it cannot write notifications or the audit log itself.
GRANT SELECT, UPDATE (finished_at, finished_reason) ON escalations TO staffcast_server;
GRANT SELECT ON escalation_rounds TO staffcast_server;
GRANT SELECT, INSERT, UPDATE ON presence_seen TO staffcast_server;

CREATE FUNCTION staffcast_record_escalation_round(p_message uuid, p_round integer, p_unread uuid[], p_last boolean,
                                                  p_title text, p_body text, p_data jsonb) RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    v_event  uuid;
    v_done   integer;
    v_detail text;
BEGIN
    SELECT e.event_id, e.rounds_done INTO v_event, v_done
    FROM escalations e WHERE e.message_id = p_message AND e.finished_at IS NULL FOR UPDATE;
    IF v_event IS NULL OR p_round <> v_done + 1 THEN
        RAISE EXCEPTION 'round % of message % is not the next round of an open escalation', p_round, p_message
            USING ERRCODE = 'check_violation';
    END IF;
    INSERT INTO escalation_rounds (message_id, event_id, round, unread) VALUES (p_message, v_event, p_round, p_unread);
    UPDATE escalations SET rounds_done = p_round, last_round_at = now(),
           finished_at = CASE WHEN p_last THEN now() END,
           finished_reason = CASE WHEN p_last THEN 'max_rounds' END
    WHERE message_id = p_message;
    INSERT INTO notifications (user_id, type, title, message, data)
        SELECT a.user_id, 'escalation', left(p_title, 200), p_body, p_data
        FROM event_access a WHERE a.event_id = v_event AND a.access_level IN ('admin', 'owner')
        ORDER BY a.user_id;
    SELECT m.message_type || '/' || m.priority || ' ' || m.id || ' round ' || p_round INTO v_detail
    FROM staff_messages m WHERE m.id = p_message;
    INSERT INTO audit_log (actor, action, event_id, user_id, detail)
        SELECT 'staffcast', 'reminder', v_event, u, v_detail FROM unnest(p_unread) u;
    INSERT INTO audit_log (actor, action, event_id, user_id, detail)
        VALUES ('staffcast', 'escalation', v_event, NULL,
                v_detail || '; not read by: '
                || coalesce((SELECT string_agg(p.display_name, ', ' ORDER BY p.display_name)
                             FROM profiles p WHERE p.id = ANY (p_unread)), ''));
END $$;
REVOKE ALL ON FUNCTION staffcast_record_escalation_round(uuid, integer, uuid[], boolean, text, text, jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION staffcast_record_escalation_round(uuid, integer, uuid[], boolean, text, text, jsonb)
    TO staffcast_server;
