-- The organiser's toolbox (issue 11, CONTRACT §6): scheduled sends, and what search and the
-- double-send guard need.

-- Scheduled sends. A row is written when an admin or owner schedules a send; any server's
-- scheduler claims due rows with FOR UPDATE SKIP LOCKED, inserts the message as the row's
-- sender (row-level security judges it then, so a sender who lost access sends nothing) and
-- marks the row sent in the same transaction: each row is sent exactly once, whatever the
-- number of servers, and a row due while every server was down is sent (marked late) by the
-- first server that starts.
CREATE TABLE scheduled_messages (
    id                 uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    event_id           uuid NOT NULL REFERENCES events(id) ON DELETE CASCADE,
    sender_id          uuid NOT NULL REFERENCES profiles(id),
    message            text NOT NULL CHECK (length(message) > 0 AND octet_length(message) <= 4096),
    message_type       text NOT NULL CHECK (message_type IN ('broadcast','alert','emergency')),
    priority           text NOT NULL CHECK (priority IN ('low','normal','high','urgent')),
    expires_in_minutes integer CHECK (expires_in_minutes BETWEEN 1 AND 43200),
    send_at            timestamptz NOT NULL,
    status             text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending','sent','cancelled')),
    message_id         uuid REFERENCES staff_messages(id),
    -- Sent more than a minute after send_at (every server was down at its time).
    late               boolean NOT NULL DEFAULT false,
    -- Why a row was cancelled by the scheduler rather than by a person (e.g. access ended).
    note               text,
    created_at         timestamptz NOT NULL DEFAULT now(),
    done_at            timestamptz
);
-- The scheduler's scan: pending rows by time.
CREATE INDEX scheduled_messages_due ON scheduled_messages (send_at) WHERE status = 'pending';
CREATE INDEX scheduled_messages_event ON scheduled_messages (event_id, send_at);

ALTER TABLE scheduled_messages ENABLE ROW LEVEL SECURITY;
ALTER TABLE scheduled_messages FORCE ROW LEVEL SECURITY;
CREATE POLICY owner_all ON scheduled_messages TO PUBLIC USING (current_user <> 'staffcast_app');
-- Only admins and owners of the event see, schedule and cancel; staff see none of it.
CREATE POLICY read_scheduled ON scheduled_messages FOR SELECT TO staffcast_app
    USING (staffcast_has_access(event_id, ARRAY['admin','owner']));
CREATE POLICY schedule_messages ON scheduled_messages FOR INSERT TO staffcast_app
    WITH CHECK (sender_id = staffcast_current_user()
                AND status = 'pending'
                AND staffcast_has_access(event_id, ARRAY['admin','owner']));
CREATE POLICY cancel_scheduled ON scheduled_messages FOR UPDATE TO staffcast_app
    USING (staffcast_has_access(event_id, ARRAY['admin','owner']))
    WITH CHECK (staffcast_has_access(event_id, ARRAY['admin','owner']) AND status = 'cancelled');
GRANT SELECT, INSERT ON scheduled_messages TO staffcast_app;
GRANT UPDATE (status, done_at) ON scheduled_messages TO staffcast_app;
-- The server's own login (sql/006) runs the scheduler: it claims due rows (FOR UPDATE), marks
-- them sent, and inserts each message as its sender (SET LOCAL ROLE staffcast_app).
GRANT SELECT, UPDATE (status, message_id, late, note, done_at) ON scheduled_messages TO staffcast_server;

-- Search: the archive of one event by time (expired messages stay stored and are found with
-- include_expired), and by sender.
CREATE INDEX staff_messages_event_sent ON staff_messages (event_id, sent_at);

-- The double-send guard looks for the same text on the same event in the last minutes.
CREATE INDEX staff_messages_event_text ON staff_messages (event_id, md5(message), sent_at);

-- Edit and retract (CONTRACT §6): when a message was last corrected, and when it was
-- retracted. A retracted message leaves history, catch-up, search and unread counts, and
-- escalation stops for it (retracted_at IS NOT NULL).
ALTER TABLE staff_messages ADD COLUMN edited_at timestamptz, ADD COLUMN retracted_at timestamptz;

-- Every edit and retract, in commit order: the audit of every version (old and new text, who,
-- when) and the log every server follows (by seq, like staff_messages) to send
-- `message_updated` and `message_retracted` live. Written only by the trigger below.
CREATE TABLE message_changes (
    seq         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    message_id  uuid NOT NULL REFERENCES staff_messages(id) ON DELETE CASCADE,
    event_id    uuid NOT NULL,
    action      text NOT NULL CHECK (action IN ('edit','retract')),
    old_message text NOT NULL,
    new_message text,            -- NULL for a retract
    actor_id    uuid,            -- NULL when the server's own login made the change
    changed_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX message_changes_message ON message_changes (message_id, seq);

CREATE TRIGGER message_changes_serialize BEFORE INSERT ON message_changes
    FOR EACH STATEMENT EXECUTE FUNCTION staffcast_serialize_log('80');
CREATE TRIGGER message_changes_notify AFTER INSERT ON message_changes
    FOR EACH STATEMENT EXECUTE FUNCTION staffcast_notify('message_change');

ALTER TABLE message_changes ENABLE ROW LEVEL SECURITY;
ALTER TABLE message_changes FORCE ROW LEVEL SECURITY;
CREATE POLICY owner_all ON message_changes TO PUBLIC USING (current_user <> 'staffcast_app');
-- The versions of a message are for its event's admins and owners.
CREATE POLICY read_message_changes ON message_changes FOR SELECT TO staffcast_app
    USING (staffcast_has_access(event_id, ARRAY['admin','owner']));
GRANT SELECT ON message_changes TO staffcast_app;
-- The change listener (the server's own login) follows the log.
GRANT SELECT ON message_changes TO staffcast_server;

-- Only admins and owners of the event change a message's text or retract it (staff may only
-- add themselves to read_by, which staffcast_guard_read_by checks); a retracted message
-- changes no more.
CREATE FUNCTION staffcast_guard_message_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF current_user = 'staffcast_app' AND (NEW.message IS DISTINCT FROM OLD.message
            OR NEW.edited_at IS DISTINCT FROM OLD.edited_at
            OR NEW.retracted_at IS DISTINCT FROM OLD.retracted_at) THEN
        IF NOT staffcast_has_access(OLD.event_id, ARRAY['admin','owner']) THEN
            RAISE EXCEPTION 'only admins and owners of the event may edit or retract its messages'
                USING ERRCODE = 'insufficient_privilege';
        END IF;
        IF OLD.retracted_at IS NOT NULL THEN
            RAISE EXCEPTION 'a retracted message cannot change'
                USING ERRCODE = 'insufficient_privilege';
        END IF;
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER staff_messages_guard_change BEFORE UPDATE OF message, edited_at, retracted_at ON staff_messages
    FOR EACH ROW EXECUTE FUNCTION staffcast_guard_message_change();

-- SECURITY DEFINER: users cannot write message_changes themselves, only through a change.
CREATE FUNCTION staffcast_log_message_change() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
    IF NEW.retracted_at IS NOT NULL AND OLD.retracted_at IS NULL THEN
        INSERT INTO message_changes (message_id, event_id, action, old_message, new_message, actor_id)
            VALUES (NEW.id, NEW.event_id, 'retract', OLD.message, NULL, staffcast_current_user());
    ELSIF NEW.message IS DISTINCT FROM OLD.message THEN
        INSERT INTO message_changes (message_id, event_id, action, old_message, new_message, actor_id)
            VALUES (NEW.id, NEW.event_id, 'edit', OLD.message, NEW.message, staffcast_current_user());
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER staff_messages_log_change AFTER UPDATE OF message, retracted_at ON staff_messages
    FOR EACH ROW EXECUTE FUNCTION staffcast_log_message_change();

GRANT UPDATE (message, edited_at, retracted_at) ON staff_messages TO staffcast_app;

-- Unread counts leave retracted messages out (as expired ones).
CREATE OR REPLACE FUNCTION staffcast_unread_count(p_user uuid, p_event uuid) RETURNS bigint
LANGUAGE sql STABLE SET search_path = public, pg_temp AS $$
    SELECT (SELECT count(*) FROM staff_messages m
             WHERE m.event_id = p_event AND m.retracted_at IS NULL AND (m.expires_at IS NULL OR m.expires_at > now()))
         - (SELECT count(*) FROM staff_messages m
             WHERE m.event_id = p_event AND m.sender_id = p_user AND m.retracted_at IS NULL
               AND (m.expires_at IS NULL OR m.expires_at > now()))
         - (SELECT count(*) FROM message_reads r JOIN staff_messages m ON m.id = r.message_id
             WHERE r.user_id = p_user AND r.event_id = p_event AND m.sender_id <> p_user AND m.retracted_at IS NULL
               AND (m.expires_at IS NULL OR m.expires_at > now()))
$$;

-- Staff replies to a message (CONTRACT §6, Replies): every reply is kept (the latest per person
-- is what receipts and GET /v1/messages/{id}/replies show), in commit order, and followed by
-- every server (by seq, like staff_messages) to send `reply` frames live to the event's
-- subscribed admins and owners.
CREATE TABLE message_replies (
    seq        bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
    id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    message_id uuid NOT NULL REFERENCES staff_messages(id) ON DELETE CASCADE,
    event_id   uuid NOT NULL REFERENCES events(id) ON DELETE CASCADE,
    user_id    uuid NOT NULL REFERENCES profiles(id) ON DELETE CASCADE,
    status     text NOT NULL CHECK (status IN ('on_my_way','running_late','cannot_make_it','done','custom')),
    text       text CHECK (octet_length(text) <= 280),
    replied_at timestamptz NOT NULL DEFAULT now(),
    CHECK (status <> 'custom' OR length(text) > 0)
);
CREATE INDEX message_replies_latest ON message_replies (message_id, user_id, seq DESC);

CREATE TRIGGER message_replies_serialize BEFORE INSERT ON message_replies
    FOR EACH STATEMENT EXECUTE FUNCTION staffcast_serialize_log('81');
CREATE TRIGGER message_replies_notify AFTER INSERT ON message_replies
    FOR EACH STATEMENT EXECUTE FUNCTION staffcast_notify('reply');

ALTER TABLE message_replies ENABLE ROW LEVEL SECURITY;
ALTER TABLE message_replies FORCE ROW LEVEL SECURITY;
CREATE POLICY owner_all ON message_replies TO PUBLIC USING (current_user <> 'staffcast_app');
-- One's own replies; the event's admins and owners see everyone's.
CREATE POLICY read_replies ON message_replies FOR SELECT TO staffcast_app
    USING (user_id = staffcast_current_user() OR staffcast_has_access(event_id, ARRAY['admin','owner']));
-- Anyone with access replies, only as themself, only to a live (not retracted) message of an
-- event they can see, under that message's own event.
CREATE POLICY reply_to_messages ON message_replies FOR INSERT TO staffcast_app
    WITH CHECK (user_id = staffcast_current_user()
                AND staffcast_has_access(event_id, ARRAY['staff','admin','owner'])
                AND event_id = (SELECT m.event_id FROM staff_messages m
                                WHERE m.id = message_id AND m.retracted_at IS NULL));
GRANT SELECT, INSERT ON message_replies TO staffcast_app;
GRANT SELECT ON message_replies TO staffcast_server;

-- Named templates per event (CONTRACT §6, Templates): the announcements made every day.
-- Only the event's admins and owners see, create and delete them.
CREATE TABLE message_templates (
    event_id           uuid NOT NULL REFERENCES events(id) ON DELETE CASCADE,
    name               text NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
    message            text NOT NULL CHECK (length(message) > 0 AND octet_length(message) <= 4096),
    message_type       text NOT NULL CHECK (message_type IN ('broadcast','alert','emergency')),
    priority           text NOT NULL CHECK (priority IN ('low','normal','high','urgent')),
    expires_in_minutes integer CHECK (expires_in_minutes BETWEEN 1 AND 43200),
    created_by         uuid NOT NULL REFERENCES profiles(id),
    created_at         timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (event_id, name)
);
ALTER TABLE message_templates ENABLE ROW LEVEL SECURITY;
ALTER TABLE message_templates FORCE ROW LEVEL SECURITY;
CREATE POLICY owner_all ON message_templates TO PUBLIC USING (current_user <> 'staffcast_app');
CREATE POLICY read_templates ON message_templates FOR SELECT TO staffcast_app
    USING (staffcast_has_access(event_id, ARRAY['admin','owner']));
CREATE POLICY create_templates ON message_templates FOR INSERT TO staffcast_app
    WITH CHECK (created_by = staffcast_current_user() AND staffcast_has_access(event_id, ARRAY['admin','owner']));
CREATE POLICY delete_templates ON message_templates FOR DELETE TO staffcast_app
    USING (staffcast_has_access(event_id, ARRAY['admin','owner']));
GRANT SELECT, INSERT, DELETE ON message_templates TO staffcast_app;
