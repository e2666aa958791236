-- Audiences (docs/protocol.md, Audiences): teams and zones of an event's people.

-- A team is a named subset of an event's people; a zone is a team people join themselves by
-- checking in at their post. (kind is part of a unique key so that team_members can copy it
-- under a foreign key: the one-zone-per-person index below needs it on the member row.)
CREATE TABLE teams (
    event_id   uuid NOT NULL REFERENCES events(id) ON DELETE CASCADE,
    name       text NOT NULL CHECK (length(name) BETWEEN 1 AND 100 AND position('/' IN name) = 0),
    kind       text NOT NULL DEFAULT 'team' CHECK (kind IN ('team','zone')),
    created_by uuid REFERENCES profiles(id) ON DELETE SET NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (event_id, name),
    UNIQUE (event_id, name, kind)
);

-- Members must have access to the event: when access ends, so does every membership
-- (the foreign key to event_access cascades).
CREATE TABLE team_members (
    event_id  uuid NOT NULL,
    team_name text NOT NULL,
    kind      text NOT NULL,
    user_id   uuid NOT NULL,
    added_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (event_id, team_name, user_id),
    FOREIGN KEY (event_id, team_name, kind) REFERENCES teams (event_id, name, kind) ON DELETE CASCADE,
    FOREIGN KEY (event_id, user_id) REFERENCES event_access (event_id, user_id) ON DELETE CASCADE
);
-- At most one zone per person per event, whoever writes the row.
CREATE UNIQUE INDEX team_members_one_zone ON team_members (event_id, user_id) WHERE kind = 'zone';
CREATE INDEX team_members_user ON team_members (user_id, event_id);

ALTER TABLE teams ENABLE ROW LEVEL SECURITY;
ALTER TABLE teams FORCE ROW LEVEL SECURITY;
ALTER TABLE team_members ENABLE ROW LEVEL SECURITY;
ALTER TABLE team_members FORCE ROW LEVEL SECURITY;
CREATE POLICY owner_all ON teams TO PUBLIC USING (current_user <> 'staffcast_app');
CREATE POLICY owner_all ON team_members TO PUBLIC USING (current_user <> 'staffcast_app');

-- Everyone on the event sees its team and zone names (a zone is checked into by name);
-- only admins and owners create and delete them.
CREATE POLICY read_teams ON teams FOR SELECT TO staffcast_app
    USING (staffcast_has_access(event_id, ARRAY['staff','admin','owner']));
CREATE POLICY create_teams ON teams FOR INSERT TO staffcast_app
    WITH CHECK (created_by = staffcast_current_user() AND staffcast_has_access(event_id, ARRAY['admin','owner']));
CREATE POLICY delete_teams ON teams FOR DELETE TO staffcast_app
    USING (staffcast_has_access(event_id, ARRAY['admin','owner']));
GRANT SELECT, INSERT, DELETE ON teams TO staffcast_app;

-- Staff see their own memberships; admins and owners see and change everyone's. Staff move
-- themselves between zones only through staffcast_zone_checkin.
CREATE POLICY read_team_members ON team_members FOR SELECT TO staffcast_app
    USING (user_id = staffcast_current_user() OR staffcast_has_access(event_id, ARRAY['admin','owner']));
CREATE POLICY add_team_members ON team_members FOR INSERT TO staffcast_app
    WITH CHECK (staffcast_has_access(event_id, ARRAY['admin','owner']));
CREATE POLICY remove_team_members ON team_members FOR DELETE TO staffcast_app
    USING (staffcast_has_access(event_id, ARRAY['admin','owner']));
GRANT SELECT, INSERT, DELETE ON team_members TO staffcast_app;
GRANT SELECT ON teams, team_members TO staffcast_server;

-- A check-in: the caller (anyone with access to the event) into zone p_name, out of any other
-- zone of that event, in one statement (the one-zone index arbitrates two at once).
-- Returns false when the event has no zone by that name (or the caller has no access).
CREATE FUNCTION staffcast_zone_checkin(p_event uuid, p_name text) RETURNS boolean
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    me uuid := staffcast_current_user();
BEGIN
    IF me IS NULL OR NOT staffcast_has_access(p_event, ARRAY['staff','admin','owner'])
       OR NOT EXISTS (SELECT 1 FROM teams WHERE event_id = p_event AND name = p_name AND kind = 'zone') THEN
        RETURN false;
    END IF;
    INSERT INTO team_members (event_id, team_name, kind, user_id) VALUES (p_event, p_name, 'zone', me)
        ON CONFLICT (event_id, user_id) WHERE kind = 'zone'
        DO UPDATE SET team_name = EXCLUDED.team_name, added_at = now();
    RETURN true;
END $$;
REVOKE ALL ON FUNCTION staffcast_zone_checkin(uuid, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION staffcast_zone_checkin(uuid, text) TO staffcast_app;

-- Team changes are audited (extending whatever actions other migrations allow).
DO $$
DECLARE
    current_check text;
BEGIN
    SELECT pg_get_constraintdef(oid) INTO current_check FROM pg_constraint
    WHERE conrelid = 'audit_log'::regclass AND conname = 'audit_log_action_check';
    IF current_check IS NULL THEN
        RETURN;
    END IF;
    IF position('team_create' IN current_check) = 0 THEN
        IF position('ARRAY[' IN current_check) = 0 THEN
            RAISE EXCEPTION 'unexpected audit_log_action_check: %', current_check;
        END IF;
        ALTER TABLE audit_log DROP CONSTRAINT audit_log_action_check;
        EXECUTE 'ALTER TABLE audit_log ADD CONSTRAINT audit_log_action_check '
            || replace(current_check, 'ARRAY[',
                       'ARRAY[''team_create''::text, ''team_delete''::text, ''team_add''::text, '
                       || '''team_remove''::text, ''zone_checkin''::text, ');
    END IF;
END $$;

-- Audited by triggers whoever makes the change (a user over HTTP under row-level security, who
-- may not write the audit log, or the server's own login).
CREATE FUNCTION staffcast_audit_team() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    actor text := coalesce(nullif(current_setting('staffcast.actor', true), ''),
                           'http: user ' || staffcast_current_user()::text, session_user::text);
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO audit_log (actor, action, event_id, detail)
            VALUES (actor, 'team_create', NEW.event_id, format('%s %s', NEW.kind, NEW.name));
    ELSE
        INSERT INTO audit_log (actor, action, event_id, detail)
            VALUES (actor, 'team_delete', OLD.event_id, format('%s %s', OLD.kind, OLD.name));
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER teams_audit AFTER INSERT OR DELETE ON teams
    FOR EACH ROW EXECUTE FUNCTION staffcast_audit_team();

-- Memberships: a zone row written by the member themself is a check-in. Removals that follow
-- from a deleted team or ended access are not logged one by one (the team_delete or revoke is).
CREATE FUNCTION staffcast_audit_team_member() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    me uuid := staffcast_current_user();
    actor text := coalesce(nullif(current_setting('staffcast.actor', true), ''),
                           'http: user ' || me::text, session_user::text);
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO audit_log (actor, action, event_id, user_id, detail)
            VALUES (actor, CASE WHEN NEW.kind = 'zone' AND NEW.user_id = me THEN 'zone_checkin' ELSE 'team_add' END,
                    NEW.event_id, NEW.user_id, NEW.team_name);
    ELSIF TG_OP = 'UPDATE' THEN
        IF NEW.team_name IS DISTINCT FROM OLD.team_name THEN
            INSERT INTO audit_log (actor, action, event_id, user_id, detail)
                VALUES (actor, 'zone_checkin', NEW.event_id, NEW.user_id,
                        format('%s (from %s)', NEW.team_name, OLD.team_name));
        END IF;
    ELSIF EXISTS (SELECT 1 FROM teams WHERE event_id = OLD.event_id AND name = OLD.team_name)
          AND EXISTS (SELECT 1 FROM event_access WHERE event_id = OLD.event_id AND user_id = OLD.user_id) THEN
        INSERT INTO audit_log (actor, action, event_id, user_id, detail)
            VALUES (actor, 'team_remove', OLD.event_id, OLD.user_id, OLD.team_name);
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER team_members_audit AFTER INSERT OR UPDATE OR DELETE ON team_members
    FOR EACH ROW EXECUTE FUNCTION staffcast_audit_team_member();

-- ---------------------------------------------------------------------------------------
-- Sending to an audience. A message with teams exists only for the members of those teams at
-- the time it is sent, plus the event's admins and owners (then, and now). `teams` keeps the
-- names as sent (empty: the whole event); `message_audience` is the resolved set of people,
-- fixed at send time: later membership changes do not change who a message was for.
ALTER TABLE staff_messages ADD COLUMN teams text[] NOT NULL DEFAULT '{}';

CREATE TABLE message_audience (
    message_id uuid NOT NULL REFERENCES staff_messages(id) ON DELETE CASCADE,
    user_id    uuid NOT NULL,
    event_id   uuid NOT NULL,
    PRIMARY KEY (message_id, user_id)
);
-- One user's targeted messages on one event: unread counts.
CREATE INDEX message_audience_user_event ON message_audience (user_id, event_id);

ALTER TABLE message_audience ENABLE ROW LEVEL SECURITY;
ALTER TABLE message_audience FORCE ROW LEVEL SECURITY;
CREATE POLICY owner_all ON message_audience TO PUBLIC USING (current_user <> 'staffcast_app');
CREATE POLICY read_message_audience ON message_audience FOR SELECT TO staffcast_app
    USING (user_id = staffcast_current_user() OR staffcast_has_access(event_id, ARRAY['admin','owner']));
GRANT SELECT ON message_audience TO staffcast_app, staffcast_server;

-- True when the current user is in the audience of message p_message of p_event, or is an
-- admin or owner of that event now. SECURITY DEFINER: one index probe, no policy recursion.
CREATE FUNCTION staffcast_in_audience(p_message uuid, p_event uuid) RETURNS boolean
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
    SELECT EXISTS (SELECT 1 FROM message_audience a
                   WHERE a.message_id = p_message AND a.user_id = staffcast_current_user())
        OR staffcast_has_access(p_event, ARRAY['admin','owner'])
$$;

-- Restrictive: on top of "anyone on the event reads its messages", a targeted message is read
-- (and marked, replied to, answered: those read the row too) only by its audience. A message
-- to the whole event (teams = '{}', the common case) costs one array comparison, no call.
CREATE POLICY audience_only ON staff_messages AS RESTRICTIVE FOR SELECT TO staffcast_app
    USING (teams = '{}' OR staffcast_in_audience(id, event_id));

-- Marks of read need no policy of their own: mark_own_reads (sql/005) reads the message's
-- event under row-level security, so a mark outside the audience finds no message and fails.
-- (The batch path, run as the server's login, checks the audience explicitly.)

-- After a send: its audience (for targeted messages: the members of its teams and the event's
-- admins and owners, the sender among them), then its escalation row with that audience, and
-- its audit entry. One statement each per INSERT statement, whatever the batch size.
CREATE OR REPLACE FUNCTION staffcast_after_send() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
    INSERT INTO message_audience (message_id, user_id, event_id)
        SELECT n.id, u.user_id, n.event_id
        FROM new_rows n
        CROSS JOIN LATERAL (
            SELECT tm.user_id FROM team_members tm WHERE tm.event_id = n.event_id AND tm.team_name = ANY (n.teams)
            UNION
            SELECT a.user_id FROM event_access a WHERE a.event_id = n.event_id AND a.access_level IN ('admin','owner')
            UNION
            SELECT n.sender_id) u
        WHERE cardinality(n.teams) > 0;
    INSERT INTO escalations (message_id, event_id, audience)
        SELECT n.id, n.event_id,
               CASE WHEN cardinality(n.teams) = 0 THEN
                   ARRAY(SELECT a.user_id FROM event_access a
                         WHERE a.event_id = n.event_id AND a.user_id <> n.sender_id ORDER BY a.user_id)
               ELSE
                   ARRAY(SELECT ma.user_id FROM message_audience ma
                         WHERE ma.message_id = n.id AND ma.user_id <> n.sender_id ORDER BY ma.user_id)
               END
        FROM new_rows n WHERE n.escalate_after_minutes IS NOT NULL;
    INSERT INTO audit_log (actor, action, event_id, user_id, detail)
        SELECT p.display_name, 'message_send', n.event_id, n.sender_id,
               n.message_type || '/' || n.priority || ' ' || n.id
               || CASE WHEN n.escalate_after_minutes IS NULL THEN ''
                       ELSE ' escalate_after=' || n.escalate_after_minutes || 'm' END
               || CASE WHEN cardinality(n.teams) = 0 THEN ''
                       ELSE ' teams=' || array_to_string(n.teams, ',') END
               || ': ' || left(n.message, 200)
        FROM new_rows n JOIN profiles p ON p.id = n.sender_id;
    RETURN NULL;
END $$;

-- Unread counts count the messages one is in the audience of: the event's untargeted
-- messages plus one's targeted ones (an index range scan of message_audience).
CREATE OR REPLACE FUNCTION staffcast_unread_count(p_user uuid, p_event uuid) RETURNS bigint
LANGUAGE sql STABLE SET search_path = public, pg_temp AS $$
    SELECT (SELECT count(*) FROM staff_messages m
             WHERE m.event_id = p_event AND m.teams = '{}' AND m.retracted_at IS NULL
               AND (m.expires_at IS NULL OR m.expires_at > now()))
         + (SELECT count(*) FROM message_audience a JOIN staff_messages m ON m.id = a.message_id
             WHERE a.user_id = p_user AND a.event_id = p_event AND m.retracted_at IS NULL
               AND (m.expires_at IS NULL OR m.expires_at > now()))
         - (SELECT count(*) FROM staff_messages m
             WHERE m.event_id = p_event AND m.sender_id = p_user AND m.retracted_at IS NULL
               AND (m.expires_at IS NULL OR m.expires_at > now()))
         - (SELECT count(*) FROM message_reads r JOIN staff_messages m ON m.id = r.message_id
             WHERE r.user_id = p_user AND r.event_id = p_event AND m.sender_id <> p_user AND m.retracted_at IS NULL
               AND (m.expires_at IS NULL OR m.expires_at > now())
               AND (m.teams = '{}' OR EXISTS (SELECT 1 FROM message_audience a
                                              WHERE a.message_id = m.id AND a.user_id = p_user)))
$$;

-- Receipts of a targeted message count its audience (but the sender), not the roster.
CREATE OR REPLACE FUNCTION staffcast_receipts(p_message uuid)
RETURNS TABLE (user_id uuid, display_name text, read_at timestamptz)
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    v_event    uuid;
    v_sender   uuid;
    v_targeted boolean;
BEGIN
    SELECT m.event_id, m.sender_id, cardinality(m.teams) > 0 INTO v_event, v_sender, v_targeted
    FROM staff_messages m WHERE m.id = p_message;
    IF v_event IS NULL OR NOT staffcast_has_access(v_event, ARRAY['admin','owner']) THEN
        RETURN;
    END IF;
    IF v_targeted THEN
        RETURN QUERY
            SELECT w.id, w.display_name, w.read_at FROM (
                SELECT p.id, p.display_name, r.read_at
                FROM message_audience a
                JOIN profiles p ON p.id = a.user_id
                LEFT JOIN message_reads r ON r.message_id = p_message AND r.user_id = a.user_id
                WHERE a.message_id = p_message AND a.user_id <> v_sender
                UNION ALL
                SELECT p.id, p.display_name, r.read_at
                FROM message_reads r
                JOIN profiles p ON p.id = r.user_id
                WHERE r.message_id = p_message
                  AND (r.user_id = v_sender OR NOT EXISTS (SELECT 1 FROM message_audience a
                                                           WHERE a.message_id = p_message AND a.user_id = r.user_id))
            ) w
            ORDER BY w.display_name, w.id;
        RETURN;
    END IF;
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

-- Scheduled sends and templates carry their audience by team name (resolved when sent).
ALTER TABLE scheduled_messages ADD COLUMN teams text[] NOT NULL DEFAULT '{}';
ALTER TABLE message_templates ADD COLUMN teams text[] NOT NULL DEFAULT '{}';

-- ---------------------------------------------------------------------------------------
-- Polls. A message may ask a question with 2 to 6 options (poll_options; NULL: no poll). The
-- safety check is the poll ["I am safe", "I need help"]. Each person's answer is one row of
-- poll_answers (answering again changes it); every answer is also a row of poll_answer_log,
-- in commit order, that every server follows (like message_reads) to send live tallies.
ALTER TABLE staff_messages ADD COLUMN poll_options text[]
    CHECK (poll_options IS NULL OR cardinality(poll_options) BETWEEN 2 AND 6);
ALTER TABLE scheduled_messages ADD COLUMN poll_options text[]
    CHECK (poll_options IS NULL OR cardinality(poll_options) BETWEEN 2 AND 6);

CREATE TABLE poll_answers (
    message_id  uuid NOT NULL REFERENCES staff_messages(id) ON DELETE CASCADE,
    user_id     uuid NOT NULL,
    event_id    uuid NOT NULL,
    option      integer NOT NULL CHECK (option BETWEEN 0 AND 5),
    answered_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (message_id, user_id)
);

CREATE TABLE poll_answer_log (
    seq         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    message_id  uuid NOT NULL REFERENCES staff_messages(id) ON DELETE CASCADE,
    event_id    uuid NOT NULL,
    user_id     uuid NOT NULL,
    option      integer NOT NULL,
    answered_at timestamptz NOT NULL DEFAULT now()
);
CREATE TRIGGER poll_answer_log_serialize BEFORE INSERT ON poll_answer_log
    FOR EACH STATEMENT EXECUTE FUNCTION staffcast_serialize_log('82');
CREATE TRIGGER poll_answer_log_notify AFTER INSERT ON poll_answer_log
    FOR EACH STATEMENT EXECUTE FUNCTION staffcast_notify('answer');

ALTER TABLE poll_answers ENABLE ROW LEVEL SECURITY;
ALTER TABLE poll_answers FORCE ROW LEVEL SECURITY;
ALTER TABLE poll_answer_log ENABLE ROW LEVEL SECURITY;
ALTER TABLE poll_answer_log FORCE ROW LEVEL SECURITY;
CREATE POLICY owner_all ON poll_answers TO PUBLIC USING (current_user <> 'staffcast_app');
CREATE POLICY owner_all ON poll_answer_log TO PUBLIC USING (current_user <> 'staffcast_app');
-- One's own answers; the event's admins and owners see everyone's. Answers are written by the
-- server's login (group commit, explicit checks) or through staffcast_answer_poll.
CREATE POLICY read_poll_answers ON poll_answers FOR SELECT TO staffcast_app
    USING (user_id = staffcast_current_user() OR staffcast_has_access(event_id, ARRAY['admin','owner']));
CREATE POLICY read_poll_answer_log ON poll_answer_log FOR SELECT TO staffcast_app
    USING (user_id = staffcast_current_user() OR staffcast_has_access(event_id, ARRAY['admin','owner']));
GRANT SELECT ON poll_answers, poll_answer_log TO staffcast_app;
GRANT SELECT, INSERT, UPDATE (option, answered_at) ON poll_answers TO staffcast_server;
GRANT SELECT, INSERT ON poll_answer_log TO staffcast_server;

-- Each "I need help" answer to a safety check: at once a `help` notification to every admin
-- and owner of the event (SECURITY DEFINER: the server's login may not write notifications).
CREATE FUNCTION staffcast_after_answer() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
    INSERT INTO notifications (user_id, type, title, message, data)
        SELECT a.user_id, 'help', left(p.display_name || ' needs help', 200),
               p.display_name || ' answered "I need help" to: ' || left(m.message, 500),
               jsonb_build_object('message_id', n.message_id, 'user_id', n.user_id, 'display_name', p.display_name)
        FROM new_rows n
        JOIN staff_messages m ON m.id = n.message_id
        JOIN profiles p ON p.id = n.user_id
        JOIN event_access a ON a.event_id = n.event_id AND a.access_level IN ('admin','owner')
        WHERE m.poll_options = ARRAY['I am safe','I need help'] AND n.option = 1
        ORDER BY n.seq, a.user_id;
    RETURN NULL;
END $$;
CREATE TRIGGER poll_answer_log_after_answer AFTER INSERT ON poll_answer_log
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION staffcast_after_answer();

-- ---------------------------------------------------------------------------------------
-- Reports: an event's audit log for its admins and owners (GET /v1/events/{id}/audit, JSON or
-- CSV), newest first. Neither the users nor the server's login read audit_log itself; this
-- checks the caller's level once and returns that event's entries only.
CREATE FUNCTION staffcast_event_audit(p_event uuid, p_limit integer)
RETURNS TABLE (at timestamptz, actor text, action text, event_id uuid, user_id uuid, detail text)
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
    IF NOT staffcast_has_access(p_event, ARRAY['admin','owner']) THEN
        RETURN;
    END IF;
    RETURN QUERY
        SELECT l.at, l.actor, l.action, l.event_id, l.user_id, l.detail FROM audit_log l
        WHERE l.event_id = p_event ORDER BY l.id DESC LIMIT p_limit;
END $$;
REVOKE ALL ON FUNCTION staffcast_event_audit(uuid, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION staffcast_event_audit(uuid, integer) TO staffcast_app;
