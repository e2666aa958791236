-- Invite links (CONTRACT §7): an admin or owner of an event creates a short-lived code that lets
-- up to max_uses people join the event at access_level. Only the SHA-256 of a code is stored,
-- like a token's; the code itself is shown once, in the join URL.

CREATE TABLE invites (
    code_hash    bytea PRIMARY KEY CHECK (octet_length(code_hash) = 32),
    event_id     uuid NOT NULL REFERENCES events(id) ON DELETE CASCADE,
    access_level text NOT NULL CHECK (access_level IN ('staff','admin','owner')),
    created_by   uuid REFERENCES profiles(id) ON DELETE SET NULL, -- NULL: made from the shell
    created_at   timestamptz NOT NULL DEFAULT now(),
    expires_at   timestamptz NOT NULL,
    max_uses     integer NOT NULL CHECK (max_uses BETWEEN 1 AND 10000),
    uses         integer NOT NULL DEFAULT 0 CHECK (uses BETWEEN 0 AND max_uses),
    revoked_at   timestamptz
);
CREATE INDEX invites_event ON invites (event_id);
CREATE INDEX invites_expires ON invites (expires_at);

-- The rank of a level: an invite may not grant more than its creator holds.
CREATE FUNCTION staffcast_level_rank(p_level text) RETURNS integer LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE p_level WHEN 'staff' THEN 1 WHEN 'admin' THEN 2 WHEN 'owner' THEN 3 END
$$;

-- The current user is an admin or owner of the event, at least at p_level.
CREATE FUNCTION staffcast_may_invite(p_event uuid, p_level text) RETURNS boolean
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
    SELECT EXISTS (SELECT 1 FROM event_access a
                   WHERE a.event_id = p_event
                     AND a.user_id = staffcast_current_user()
                     AND a.access_level IN ('admin','owner')
                     AND staffcast_level_rank(a.access_level) >= staffcast_level_rank(p_level))
$$;

ALTER TABLE invites ENABLE ROW LEVEL SECURITY;
ALTER TABLE invites FORCE ROW LEVEL SECURITY;
-- The server's own login (redeem, which has no user yet; admin commands; clean-up).
CREATE POLICY owner_all ON invites TO PUBLIC USING (current_user <> 'staffcast_app');
CREATE POLICY read_event_invites ON invites FOR SELECT TO staffcast_app
    USING (staffcast_has_access(event_id, ARRAY['admin','owner']));
CREATE POLICY create_event_invites ON invites FOR INSERT TO staffcast_app
    WITH CHECK (created_by = staffcast_current_user() AND staffcast_may_invite(event_id, access_level));
CREATE POLICY revoke_event_invites ON invites FOR UPDATE TO staffcast_app
    USING (staffcast_has_access(event_id, ARRAY['admin','owner']))
    WITH CHECK (staffcast_has_access(event_id, ARRAY['admin','owner']));
GRANT SELECT, INSERT ON invites TO staffcast_app;
GRANT UPDATE (revoked_at) ON invites TO staffcast_app;

-- Creating, redeeming and revoking invites are audited. The check is extended from whatever
-- it is now, so that actions other migrations added stay allowed.
DO $$
DECLARE
    current_check text;
BEGIN
    SELECT pg_get_constraintdef(oid) INTO current_check FROM pg_constraint
    WHERE conrelid = 'audit_log'::regclass AND conname = 'audit_log_action_check';
    IF current_check IS NULL THEN
        RETURN;
    END IF;
    IF position('invite_create' IN current_check) = 0 THEN
        IF position('ARRAY[' IN current_check) = 0 THEN
            RAISE EXCEPTION 'unexpected audit_log_action_check: %', current_check;
        END IF;
        ALTER TABLE audit_log DROP CONSTRAINT audit_log_action_check;
        EXECUTE 'ALTER TABLE audit_log ADD CONSTRAINT audit_log_action_check '
            || replace(current_check, 'ARRAY[',
                       'ARRAY[''invite_create''::text, ''invite_redeem''::text, ''invite_revoke''::text, ');
    END IF;
END $$;

-- Creates and revokes are audited by a trigger, whoever makes them: a user over HTTP (under
-- row-level security, who may not write the audit log), or `staffcast admin` (which names its
-- operating-system user in staffcast.actor).
CREATE FUNCTION staffcast_audit_invite() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    actor text := coalesce(nullif(current_setting('staffcast.actor', true), ''),
                           'http: user ' || staffcast_current_user()::text, session_user::text);
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO audit_log (actor, action, event_id, detail)
            VALUES (actor, 'invite_create', NEW.event_id,
                    format('%s, %s use(s), expires %s', NEW.access_level, NEW.max_uses,
                           to_char(NEW.expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')));
    ELSIF NEW.revoked_at IS NOT NULL AND OLD.revoked_at IS NULL THEN
        INSERT INTO audit_log (actor, action, event_id) VALUES (actor, 'invite_revoke', NEW.event_id);
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER invites_audit AFTER INSERT OR UPDATE OF revoked_at ON invites
    FOR EACH ROW EXECUTE FUNCTION staffcast_audit_invite();

-- Redeeming has no user yet, so the server's login (staffcast_server, which may not write
-- profiles, access, tokens or the audit log) does it through this function only: it takes one
-- use of the invite (the row is locked, so two people never take the last use), creates the
-- profile, grants the level, inserts the token's digest (its trigger logs it to token_changes,
-- which every server's token table follows, as for `staffcast admin token issue`) and audits,
-- all in the caller's transaction. outcome: ok, unknown, revoked, expired or used_up.
CREATE FUNCTION staffcast_redeem_invite(p_code_hash bytea, p_user uuid, p_display_name text, p_token_hash bytea)
RETURNS TABLE (outcome text, event_id uuid, access_level text)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = public, pg_temp AS $$
#variable_conflict use_column
DECLARE
    i invites%ROWTYPE;
BEGIN
    SELECT * INTO i FROM invites WHERE code_hash = p_code_hash FOR UPDATE;
    IF NOT FOUND THEN
        RETURN QUERY SELECT 'unknown'::text, NULL::uuid, NULL::text;
        RETURN;
    END IF;
    IF i.revoked_at IS NOT NULL THEN
        RETURN QUERY SELECT 'revoked'::text, i.event_id, i.access_level;
        RETURN;
    END IF;
    IF i.expires_at <= now() THEN
        RETURN QUERY SELECT 'expired'::text, i.event_id, i.access_level;
        RETURN;
    END IF;
    IF i.uses >= i.max_uses THEN
        RETURN QUERY SELECT 'used_up'::text, i.event_id, i.access_level;
        RETURN;
    END IF;
    UPDATE invites SET uses = uses + 1 WHERE code_hash = p_code_hash;
    INSERT INTO profiles (id, display_name) VALUES (p_user, p_display_name);
    INSERT INTO event_access (event_id, user_id, access_level) VALUES (i.event_id, p_user, i.access_level);
    INSERT INTO api_tokens (token_hash, user_id, label) VALUES (p_token_hash, p_user, 'invite');
    INSERT INTO audit_log (actor, action, event_id, user_id, detail)
        VALUES ('invite', 'invite_redeem', i.event_id, p_user, i.access_level);
    RETURN QUERY SELECT 'ok'::text, i.event_id, i.access_level;
END $$;

-- Invites that expired over p_grace_seconds ago go (until then a redeem is told "gone"
-- rather than "no such invite"). Every server calls it now and then.
CREATE FUNCTION staffcast_delete_stale_invites(p_grace_seconds float8) RETURNS integer
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    n integer;
BEGIN
    DELETE FROM invites WHERE expires_at < now() - make_interval(secs => p_grace_seconds);
    GET DIAGNOSTICS n = ROW_COUNT;
    RETURN n;
END $$;

REVOKE EXECUTE ON FUNCTION staffcast_redeem_invite(bytea, uuid, text, bytea),
                           staffcast_delete_stale_invites(float8) FROM PUBLIC;
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'staffcast_server') THEN
        GRANT EXECUTE ON FUNCTION staffcast_redeem_invite(bytea, uuid, text, bytea),
                                  staffcast_delete_stale_invites(float8) TO staffcast_server;
    END IF;
END $$;
