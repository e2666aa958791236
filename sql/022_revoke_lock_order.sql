-- A token's end first locks every push subscription of its person in id order, before the
-- row is even updated (sql/021 ordered only the token's own, in the AFTER trigger): a fanout
-- pass locks a person's subscriptions in id order as it queues their pushes, so a revoke that
-- locked the token's subscriptions and then an older tokenless one with a lower id (or,
-- revoking all of a person's tokens, one token's and then another's) could still deadlock with
-- it. The AFTER trigger (sql/019, sql/021) then deletes what it deletes, its locks already held.
CREATE FUNCTION staffcast_push_lock_before_token_end() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
    PERFORM 1 FROM push_subscriptions s WHERE s.user_id = NEW.user_id ORDER BY s.id FOR UPDATE;
    RETURN NEW;
END $$;
REVOKE ALL ON FUNCTION staffcast_push_lock_before_token_end() FROM PUBLIC;
CREATE TRIGGER api_tokens_end_push_lock BEFORE UPDATE OF revoked_at, expires_at ON api_tokens
    FOR EACH ROW WHEN (NEW.revoked_at IS NOT NULL OR NEW.expires_at <= now())
    EXECUTE FUNCTION staffcast_push_lock_before_token_end();
