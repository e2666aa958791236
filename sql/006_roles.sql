-- Least privilege (issue 9): the server serves as a login of its own, staffcast_server, and
-- migrations and `staffcast admin` run as the owner of the tables (the embedded cluster's
-- superuser, or the role of `migrate_database_url`).
--
-- staffcast_server is not a superuser, has no BYPASSRLS, owns nothing, cannot create roles,
-- databases or objects in the schema, and is a member of staffcast_app only (NOINHERIT: it
-- does not get staffcast_app's rights except by SET ROLE, which every request transaction does).
-- Whatever a request does with SET ROLE or RESET ROLE, it ends as staffcast_app or as
-- staffcast_server, never as the table owner, and row-level security applies to both.
--
-- What the login itself may do (outside a user's transaction) is exactly what the change
-- listener, the token table, presence, status and the folded read storms need:
--   read  the change logs and the rows they point to (it fans every committed row out),
--         the token digests (it decides upgrades from memory), events, rosters, presence;
--   write presence (its own connections), api_tokens.last_used_at, and read marks
--         (message_reads + read_by/read_count: mark_read group commit checks access itself).
-- It cannot insert, change or delete messages or notifications, change access or tokens,
-- write or read the audit log, or alter any table. Token changes made over HTTP go through the
-- SECURITY DEFINER functions below, which check who may make them and audit them.

DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'staffcast_server') THEN
        CREATE ROLE staffcast_server LOGIN NOINHERIT NOSUPERUSER NOCREATEDB NOCREATEROLE NOBYPASSRLS NOREPLICATION;
    END IF;
EXCEPTION WHEN duplicate_object OR unique_violation THEN
    NULL; -- another database of the same cluster created it at the same moment
END $$;

-- On an external PostgreSQL a migrating role without CREATEROLE cannot create or grant the
-- role; docs/operations.md shows the statements a superuser runs once instead.
DO $$
BEGIN
    GRANT staffcast_app TO staffcast_server;
EXCEPTION WHEN insufficient_privilege THEN
    RAISE WARNING 'could not grant staffcast_app to staffcast_server; see docs/operations.md (database roles)';
END $$;

DO $$
BEGIN
    EXECUTE format('GRANT CONNECT, TEMPORARY ON DATABASE %I TO staffcast_server', current_database());
END $$;

GRANT USAGE ON SCHEMA public TO staffcast_server;

-- Reading: the change logs and what they point to, tokens (digests only), events, rosters,
-- presence, read marks (status and subscribe storms), the schema version.
GRANT SELECT ON profiles, events, event_access, staff_messages, notifications, message_reads,
                access_changes, token_changes, api_tokens, presence, schema_migrations
    TO staffcast_server;
-- events and event_access have row-level security for staffcast_app; the login reads them whole.
CREATE POLICY server_reads ON events       FOR SELECT TO staffcast_server USING (true);
CREATE POLICY server_reads ON event_access FOR SELECT TO staffcast_server USING (true);
-- Writing: its own presence rows, when a token was last used, and folded read marks.
GRANT SELECT, INSERT, UPDATE, DELETE ON presence TO staffcast_server;
GRANT UPDATE (last_used_at) ON api_tokens TO staffcast_server;
GRANT INSERT ON message_reads TO staffcast_server;
GRANT UPDATE (read_by, read_count) ON staff_messages TO staffcast_server;

-- Tokens get an id that names them over HTTP (never the token or its digest).
ALTER TABLE api_tokens ADD COLUMN id uuid NOT NULL DEFAULT gen_random_uuid();
CREATE UNIQUE INDEX api_tokens_id ON api_tokens (id);

-- A deleted user whose messages stay in history keeps their profile row (the sender's name),
-- marked deleted; everything else of theirs is gone (staffcast admin user delete).
ALTER TABLE profiles ADD COLUMN deleted_at timestamptz;

ALTER TABLE audit_log DROP CONSTRAINT audit_log_action_check;
ALTER TABLE audit_log ADD CONSTRAINT audit_log_action_check
    CHECK (action IN ('grant', 'revoke', 'token_issue', 'token_revoke', 'user_delete'));

-- Token lifecycle over HTTP (GET/DELETE /v1/users/{user_id}/tokens). Who may manage a user's
-- tokens: the ops token (the server's login outside any user's transaction: no
-- staffcast.user_id), the user themself, or an owner of an event the user has access to.
-- A user that does not exist (or was deleted) is managed by nobody, so the answer for one you
-- may not manage is the same as for one that does not exist.
CREATE FUNCTION staffcast_may_manage_tokens(p_user uuid) RETURNS boolean
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
    SELECT EXISTS (SELECT 1 FROM profiles p WHERE p.id = p_user AND p.deleted_at IS NULL)
       AND (staffcast_current_user() IS NULL
            OR staffcast_current_user() = p_user
            OR EXISTS (SELECT 1 FROM event_access me
                       JOIN event_access them ON them.event_id = me.event_id
                       WHERE me.user_id = staffcast_current_user() AND me.access_level = 'owner'
                         AND them.user_id = p_user))
$$;

-- A user's tokens as `staffcast admin token list` shows them: never the token or its digest.
-- No rows when the caller may not manage them.
CREATE FUNCTION staffcast_user_tokens(p_user uuid)
RETURNS TABLE (id uuid, label text, created_at timestamptz, last_used_at timestamptz,
               expires_at timestamptz, revoked_at timestamptz)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
    SELECT t.id, t.label, t.created_at, t.last_used_at, t.expires_at, t.revoked_at
    FROM api_tokens t
    WHERE t.user_id = p_user AND staffcast_may_manage_tokens(p_user)
    ORDER BY t.created_at, t.id
$$;

-- Revokes one token of p_user (p_token) or all of them (p_token NULL), audited with who asked
-- over HTTP. Returns how many were revoked; NULL when the caller may not manage p_user's
-- tokens (or p_user does not exist); -1 when p_user has no token p_token.
CREATE FUNCTION staffcast_revoke_user_tokens(p_user uuid, p_token uuid) RETURNS integer
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    n integer;
    l text;
    actor text := 'http: ' || coalesce('user ' || staffcast_current_user()::text, 'ops token');
BEGIN
    IF NOT staffcast_may_manage_tokens(p_user) THEN
        RETURN NULL;
    END IF;
    IF p_token IS NULL THEN
        UPDATE api_tokens SET revoked_at = now() WHERE user_id = p_user AND revoked_at IS NULL;
        GET DIAGNOSTICS n = ROW_COUNT;
        IF n > 0 THEN
            INSERT INTO audit_log (actor, action, user_id, detail)
                VALUES (actor, 'token_revoke', p_user, format('all tokens (%s)', n));
        END IF;
        RETURN n;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM api_tokens WHERE user_id = p_user AND id = p_token) THEN
        RETURN -1;
    END IF;
    UPDATE api_tokens SET revoked_at = now() WHERE user_id = p_user AND id = p_token AND revoked_at IS NULL
        RETURNING label INTO l;
    GET DIAGNOSTICS n = ROW_COUNT;
    IF n > 0 THEN
        INSERT INTO audit_log (actor, action, user_id, detail)
            VALUES (actor, 'token_revoke', p_user, 'one token: ' || coalesce(l, p_token::text));
    END IF;
    RETURN n;
END $$;

REVOKE EXECUTE ON FUNCTION staffcast_may_manage_tokens(uuid), staffcast_user_tokens(uuid),
                           staffcast_revoke_user_tokens(uuid, uuid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION staffcast_may_manage_tokens(uuid), staffcast_user_tokens(uuid),
                          staffcast_revoke_user_tokens(uuid, uuid) TO staffcast_app, staffcast_server;
