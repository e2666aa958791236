-- A push subscription belongs to the token that registered it (found by an attack from
-- outside: a lost phone whose token was revoked kept getting every message by Web Push, though
-- docs/security.md says a lost phone is cut off at once).
--
-- Revoking a token, or all of a user's tokens, deletes the subscriptions it registered in the
-- revoke's own transaction, and with them their queued pushes (outbox.subscription_id
-- cascades); deleting the token does too. A token that simply expires has no transaction: from
-- its expiry neither the fanout nor the claim of a push uses its subscriptions
-- (staffcast_push_token_valid), and the outbox's trim deletes them. Subscriptions stored
-- before this migration name no token: they count while their user has some valid token.
ALTER TABLE push_subscriptions ADD COLUMN token_hash bytea REFERENCES api_tokens(token_hash) ON DELETE CASCADE;
CREATE INDEX push_subscriptions_token ON push_subscriptions (token_hash);
-- The same endpoint posted again with another token now belongs to that token.
GRANT UPDATE (token_hash) ON push_subscriptions TO staffcast_app;

-- Whether a subscription of p_user registered by p_token (NULL: before this migration) may
-- still be pushed to.
CREATE FUNCTION staffcast_push_token_valid(p_user uuid, p_token bytea) RETURNS boolean
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
    SELECT CASE WHEN p_token IS NULL
        THEN EXISTS (SELECT 1 FROM api_tokens t WHERE t.user_id = p_user
                     AND t.revoked_at IS NULL AND (t.expires_at IS NULL OR t.expires_at > now()))
        ELSE EXISTS (SELECT 1 FROM api_tokens t WHERE t.token_hash = p_token
                     AND t.revoked_at IS NULL AND (t.expires_at IS NULL OR t.expires_at > now()))
    END
$$;
REVOKE ALL ON FUNCTION staffcast_push_token_valid(uuid, bytea) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION staffcast_push_token_valid(uuid, bytea) TO staffcast_server;

-- A token revoked (or given an expiry already past): its subscriptions go, and the user's
-- older ones that name no token once no valid token of theirs is left.
CREATE FUNCTION staffcast_push_after_token_end() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
    DELETE FROM push_subscriptions WHERE token_hash = NEW.token_hash;
    DELETE FROM push_subscriptions s WHERE s.user_id = NEW.user_id AND s.token_hash IS NULL
        AND NOT staffcast_push_token_valid(NEW.user_id, NULL);
    RETURN NULL;
END $$;
REVOKE ALL ON FUNCTION staffcast_push_after_token_end() FROM PUBLIC;
CREATE TRIGGER api_tokens_end_push AFTER UPDATE OF revoked_at, expires_at ON api_tokens
    FOR EACH ROW WHEN (NEW.revoked_at IS NOT NULL OR NEW.expires_at <= now())
    EXECUTE FUNCTION staffcast_push_after_token_end();
