-- A token's end locks every push subscription of its person in id order before deleting any
-- (sql/021 ordered only the token's own): a fanout pass locks a person's subscriptions in id
-- order as it queues their pushes, so a revoke that took the token's subscriptions first and
-- then an older tokenless one with a lower id (or, revoking all of a person's tokens, one token's
-- and then another's) could still deadlock with it.
CREATE OR REPLACE FUNCTION staffcast_push_after_token_end() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
    PERFORM 1 FROM push_subscriptions s WHERE s.user_id = NEW.user_id ORDER BY s.id FOR UPDATE;
    DELETE FROM push_subscriptions WHERE token_hash = NEW.token_hash;
    DELETE FROM push_subscriptions s WHERE s.user_id = NEW.user_id AND s.token_hash IS NULL
        AND NOT staffcast_push_token_valid(NEW.user_id, NULL);
    RETURN NULL;
END $$;
REVOKE ALL ON FUNCTION staffcast_push_after_token_end() FROM PUBLIC;
