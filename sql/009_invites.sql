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
