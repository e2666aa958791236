-- Tokens that expire, and a change log of tokens, so that every server can keep the table of
-- valid token digests in memory and decide WebSocket upgrades without asking the database:
-- it loads the valid tokens at start (one snapshot, with the log's highest seq) and then
-- follows token_changes by seq exactly as it follows access_changes. A new token works, and
-- a revoked one stops, within 2 s on every server (CONTRACT §8).

ALTER TABLE api_tokens
    ADD COLUMN expires_at   timestamptz,  -- NULL: never expires
    ADD COLUMN last_used_at timestamptz;  -- NULL: never used (as far as servers reported)

-- Every token that appeared, was revoked, changed its expiry or disappeared, in commit order.
-- A row only names the token; its state now is read from api_tokens (a missing or revoked
-- row means "no longer valid"). Updating last_used_at writes nothing here.
CREATE TABLE token_changes (
    seq        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    token_hash bytea NOT NULL,
    user_id    uuid NOT NULL,
    changed_at timestamptz NOT NULL DEFAULT now()
);

-- Commit order equals seq order (see staffcast_serialize_log in 001), and every server's
-- listener is woken after commit.
CREATE TRIGGER token_changes_serialize BEFORE INSERT ON token_changes
    FOR EACH STATEMENT EXECUTE FUNCTION staffcast_serialize_log('4');
CREATE TRIGGER token_changes_notify AFTER INSERT ON token_changes
    FOR EACH STATEMENT EXECUTE FUNCTION staffcast_notify('token');

CREATE FUNCTION staffcast_log_token_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        INSERT INTO token_changes (token_hash, user_id) VALUES (OLD.token_hash, OLD.user_id);
    ELSIF TG_OP = 'INSERT'
          OR NEW.revoked_at IS DISTINCT FROM OLD.revoked_at
          OR NEW.expires_at IS DISTINCT FROM OLD.expires_at THEN
        INSERT INTO token_changes (token_hash, user_id) VALUES (NEW.token_hash, NEW.user_id);
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER api_tokens_log AFTER INSERT OR UPDATE OF revoked_at, expires_at OR DELETE ON api_tokens
    FOR EACH ROW EXECUTE FUNCTION staffcast_log_token_change();

-- Token revokes are audited like issues.
ALTER TABLE audit_log DROP CONSTRAINT audit_log_action_check;
ALTER TABLE audit_log ADD CONSTRAINT audit_log_action_check
    CHECK (action IN ('grant', 'revoke', 'token_issue', 'token_revoke'));
