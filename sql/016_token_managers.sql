-- Who may revoke a user's tokens over HTTP (found by an attack from outside). A token opens
-- every event its user has access to, so the owner of one event revoking the tokens of
-- someone who also works on another organiser's event locked them out of that event too. An
-- owner may still list and revoke the tokens of someone who works only on events they own;
-- for anyone else they revoke the person's access to their own event instead. The user
-- themself and the ops token are not limited. (staffcast_may_manage_tokens, sql/006, still
-- decides who may see a user's tokens at all.)
--
-- True when the caller (staffcast.user_id) is an owner acting on someone else who has access
-- to an event the caller does not own.
CREATE FUNCTION staffcast_tokens_open_other_owners_events(p_user uuid) RETURNS boolean
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
    SELECT staffcast_current_user() IS NOT NULL
       AND staffcast_current_user() <> p_user
       AND EXISTS (SELECT 1 FROM event_access them
                   WHERE them.user_id = p_user
                     AND NOT EXISTS (SELECT 1 FROM event_access me
                                     WHERE me.event_id = them.event_id
                                       AND me.user_id = staffcast_current_user()
                                       AND me.access_level = 'owner'))
$$;

REVOKE EXECUTE ON FUNCTION staffcast_tokens_open_other_owners_events(uuid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION staffcast_tokens_open_other_owners_events(uuid) TO staffcast_app, staffcast_server;
