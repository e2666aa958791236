-- staffcast schema, version 1.
-- Applied by `staffcast migrate` (and by `staffcast serve` at start) inside one transaction,
-- under an advisory lock, and recorded in schema_migrations.

-- The role the server becomes inside every request transaction (SET LOCAL ROLE), so that
-- PostgreSQL's row-level security judges each query as the requesting user. It cannot log in.
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'staffcast_app') THEN
        CREATE ROLE staffcast_app NOLOGIN NOINHERIT;
    END IF;
EXCEPTION WHEN duplicate_object OR unique_violation THEN
    NULL; -- another database of the same cluster created it at the same moment
END $$;

DO $$
BEGIN
    EXECUTE format('GRANT staffcast_app TO %I', current_user);
EXCEPTION WHEN others THEN
    NULL; -- already a member, or current_user is a superuser that needs no grant
END $$;

CREATE TABLE profiles (
    id           uuid PRIMARY KEY,
    display_name text NOT NULL CHECK (length(display_name) BETWEEN 1 AND 200),
    created_at   timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE events (
    id         uuid PRIMARY KEY,
    name       text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    starts_at  timestamptz,
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE event_access (
    event_id     uuid REFERENCES events(id) ON DELETE CASCADE,
    user_id      uuid REFERENCES profiles(id) ON DELETE CASCADE,
    access_level text NOT NULL CHECK (access_level IN ('staff','admin','owner')),
    granted_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (event_id, user_id)
);
CREATE INDEX event_access_user ON event_access (user_id);

CREATE TABLE staff_messages (
    id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    seq          bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
    event_id     uuid NOT NULL REFERENCES events(id),
    sender_id    uuid NOT NULL REFERENCES profiles(id),
    message      text NOT NULL CHECK (length(message) > 0 AND octet_length(message) <= 4096),
    message_type text NOT NULL CHECK (message_type IN ('broadcast','alert','emergency')),
    priority     text NOT NULL CHECK (priority IN ('low','normal','high','urgent')),
    sent_at      timestamptz NOT NULL DEFAULT now(),
    expires_at   timestamptz,
    read_by      uuid[] NOT NULL DEFAULT '{}'
);
-- History, catch-up and unread counts all walk one event's messages by seq.
CREATE INDEX staff_messages_event_seq ON staff_messages (event_id, seq);

CREATE TABLE notifications (
    id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    seq        bigint GENERATED ALWAYS AS IDENTITY UNIQUE, -- cursor for live fan-out
    user_id    uuid NOT NULL REFERENCES profiles(id),
    sender_id  uuid REFERENCES profiles(id),
    type       text NOT NULL,
    title      text NOT NULL,
    message    text NOT NULL,
    data       jsonb,
    read       boolean NOT NULL DEFAULT false,
    read_at    timestamptz,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX notifications_user ON notifications (user_id, seq);

-- API tokens: only the SHA-256 of a token is stored; the token itself is shown once.
CREATE TABLE api_tokens (
    token_hash  bytea PRIMARY KEY CHECK (octet_length(token_hash) = 32),
    user_id     uuid NOT NULL REFERENCES profiles(id) ON DELETE CASCADE,
    label       text,
    created_at  timestamptz NOT NULL DEFAULT now(),
    revoked_at  timestamptz
);
CREATE INDEX api_tokens_user ON api_tokens (user_id);

-- Every change of event_access, in commit order: servers read it by seq to end live
-- subscriptions of revoked users (NOTIFY only wakes them; this table is the truth).
CREATE TABLE access_changes (
    seq          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    event_id     uuid NOT NULL,
    user_id      uuid NOT NULL,
    access_level text, -- NULL: access ended
    changed_at   timestamptz NOT NULL DEFAULT now()
);

-- Servers read new rows "WHERE seq > cursor". An identity value is taken when a row is
-- formed, not when it commits, so two concurrent writers could commit seq 11 before seq 10
-- and a reader would step over 10. Taking a per-table transaction lock before any row is
-- formed (BEFORE ... FOR EACH STATEMENT) makes commit order equal seq order.
CREATE FUNCTION staffcast_serialize_log() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_xact_lock(7354000, TG_ARGV[0]::int);
    RETURN NULL;
END $$;

CREATE TRIGGER staff_messages_serialize BEFORE INSERT ON staff_messages
    FOR EACH STATEMENT EXECUTE FUNCTION staffcast_serialize_log('1');
CREATE TRIGGER notifications_serialize BEFORE INSERT ON notifications
    FOR EACH STATEMENT EXECUTE FUNCTION staffcast_serialize_log('2');
CREATE TRIGGER access_changes_serialize BEFORE INSERT ON access_changes
    FOR EACH STATEMENT EXECUTE FUNCTION staffcast_serialize_log('3');

-- Wake every server's listener after commit (NOTIFY is delivered only on commit).
CREATE FUNCTION staffcast_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('staffcast', TG_ARGV[0]);
    RETURN NULL;
END $$;

CREATE TRIGGER staff_messages_notify AFTER INSERT ON staff_messages
    FOR EACH STATEMENT EXECUTE FUNCTION staffcast_notify('message');
CREATE TRIGGER notifications_notify AFTER INSERT ON notifications
    FOR EACH STATEMENT EXECUTE FUNCTION staffcast_notify('notification');
CREATE TRIGGER access_changes_notify AFTER INSERT ON access_changes
    FOR EACH STATEMENT EXECUTE FUNCTION staffcast_notify('access');

CREATE FUNCTION staffcast_log_access_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        INSERT INTO access_changes (event_id, user_id, access_level)
            VALUES (OLD.event_id, OLD.user_id, NULL);
    ELSIF TG_OP = 'INSERT' OR NEW.access_level IS DISTINCT FROM OLD.access_level THEN
        INSERT INTO access_changes (event_id, user_id, access_level)
            VALUES (NEW.event_id, NEW.user_id, NEW.access_level);
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER event_access_log AFTER INSERT OR UPDATE OR DELETE ON event_access
    FOR EACH ROW EXECUTE FUNCTION staffcast_log_access_change();

-- ---------------------------------------------------------------------------------------
-- Row-level security. The server runs each request as
--     SET LOCAL ROLE staffcast_app; SELECT set_config('staffcast.user_id', <user>, true);
-- and these policies decide what that user may see and change.

CREATE FUNCTION staffcast_current_user() RETURNS uuid LANGUAGE sql STABLE AS $$
    SELECT nullif(current_setting('staffcast.user_id', true), '')::uuid
$$;

-- SECURITY DEFINER so that policies can consult event_access without recursing into
-- event_access's own policy.
CREATE FUNCTION staffcast_has_access(p_event uuid, p_levels text[]) RETURNS boolean
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
    SELECT EXISTS (SELECT 1 FROM event_access a
                   WHERE a.event_id = p_event
                     AND a.user_id = staffcast_current_user()
                     AND a.access_level = ANY (p_levels))
$$;

-- An admin or owner of some event may notify a user who has access to that same event.
CREATE FUNCTION staffcast_may_notify(p_target uuid) RETURNS boolean
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
    SELECT EXISTS (SELECT 1 FROM event_access me
                   JOIN event_access target ON target.event_id = me.event_id
                   WHERE me.user_id = staffcast_current_user()
                     AND me.access_level IN ('admin','owner')
                     AND target.user_id = p_target)
$$;

-- A reader may only add themself to read_by; nothing else of a message may change.
CREATE FUNCTION staffcast_guard_read_by() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF current_user = 'staffcast_app' AND NOT (
        NEW.read_by = OLD.read_by
        OR NEW.read_by = array_append(OLD.read_by, staffcast_current_user())) THEN
        RAISE EXCEPTION 'a user may only mark a message read for themself'
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER staff_messages_guard_read_by BEFORE UPDATE ON staff_messages
    FOR EACH ROW EXECUTE FUNCTION staffcast_guard_read_by();

ALTER TABLE staff_messages ENABLE ROW LEVEL SECURITY;
ALTER TABLE staff_messages FORCE ROW LEVEL SECURITY;
ALTER TABLE notifications  ENABLE ROW LEVEL SECURITY;
ALTER TABLE notifications  FORCE ROW LEVEL SECURITY;
ALTER TABLE event_access   ENABLE ROW LEVEL SECURITY;
ALTER TABLE events         ENABLE ROW LEVEL SECURITY;

-- The table owner (the server's own login, used by admin commands and the listener) sees
-- everything; policies below apply to staffcast_app.
CREATE POLICY owner_all ON staff_messages TO PUBLIC USING (current_user <> 'staffcast_app');
CREATE POLICY owner_all ON notifications  TO PUBLIC USING (current_user <> 'staffcast_app');

CREATE POLICY read_event_messages ON staff_messages FOR SELECT TO staffcast_app
    USING (staffcast_has_access(event_id, ARRAY['staff','admin','owner']));
CREATE POLICY send_event_messages ON staff_messages FOR INSERT TO staffcast_app
    WITH CHECK (sender_id = staffcast_current_user()
                AND staffcast_has_access(event_id, ARRAY['admin','owner']));
CREATE POLICY mark_event_messages ON staff_messages FOR UPDATE TO staffcast_app
    USING (staffcast_has_access(event_id, ARRAY['staff','admin','owner']))
    WITH CHECK (staffcast_has_access(event_id, ARRAY['staff','admin','owner']));

CREATE POLICY read_own_notifications ON notifications FOR SELECT TO staffcast_app
    USING (user_id = staffcast_current_user());
CREATE POLICY mark_own_notifications ON notifications FOR UPDATE TO staffcast_app
    USING (user_id = staffcast_current_user())
    WITH CHECK (user_id = staffcast_current_user());
CREATE POLICY send_notifications ON notifications FOR INSERT TO staffcast_app
    WITH CHECK (sender_id = staffcast_current_user() AND staffcast_may_notify(user_id));

CREATE POLICY read_event_access ON event_access FOR SELECT TO staffcast_app
    USING (staffcast_has_access(event_id, ARRAY['staff','admin','owner']));
CREATE POLICY read_events ON events FOR SELECT TO staffcast_app
    USING (staffcast_has_access(id, ARRAY['staff','admin','owner']));

GRANT USAGE ON SCHEMA public TO staffcast_app;
GRANT SELECT ON profiles, events, event_access TO staffcast_app;
GRANT SELECT, INSERT ON staff_messages, notifications TO staffcast_app;
GRANT UPDATE (read_by) ON staff_messages TO staffcast_app;
GRANT UPDATE (read, read_at) ON notifications TO staffcast_app;

-- The highest seq a transaction's snapshot can see in each change log, whatever its user may
-- read. A subscribe uses it to line its history up with live fan-out (no gap, no duplicate).
CREATE FUNCTION staffcast_visible_message_seq() RETURNS bigint
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
    SELECT coalesce(max(seq), 0) FROM staff_messages
$$;
CREATE FUNCTION staffcast_visible_access_seq() RETURNS bigint
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
    SELECT coalesce(max(seq), 0) FROM access_changes
$$;
