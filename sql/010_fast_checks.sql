-- Checks on the send path that must not cost one row-level-security call per row they look
-- at (measured with pg_stat_statements in the bench: the double-send guard, run as the sender,
-- walked every message of the event in the window and called staffcast_has_access ~220 times
-- per send; a send took 5.4 ms of PostgreSQL time, growing with the window).

-- True when `p_text` went to `p_event` within `p_window` minutes and was not retracted, not
-- counting `p_excluding` (the batch's own rows). The caller's right to send to the event is
-- checked once here (admins and owners only; anyone else learns nothing: false); then the
-- lookup is one probe of staff_messages_event_text (sql/008), without per-row policies.
CREATE FUNCTION staffcast_duplicate_exists(p_event uuid, p_text text, p_window int, p_excluding uuid[])
RETURNS boolean
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
    IF p_window <= 0 OR NOT staffcast_has_access(p_event, ARRAY['admin','owner']) THEN
        RETURN false;
    END IF;
    RETURN EXISTS (SELECT 1 FROM staff_messages d
                   WHERE d.event_id = p_event AND md5(d.message) = md5(p_text) AND d.message = p_text
                     AND d.sent_at > now() - make_interval(mins => p_window) AND d.retracted_at IS NULL
                     AND d.id <> ALL (coalesce(p_excluding, '{}')));
END $$;
REVOKE ALL ON FUNCTION staffcast_duplicate_exists(uuid, text, int, uuid[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION staffcast_duplicate_exists(uuid, text, int, uuid[]) TO staffcast_app;
