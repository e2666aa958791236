-- The access check and the double-send guard keep their plans for the session (issue 21, the
-- durable path).
--
-- staffcast_has_access is called by the row-level-security policies of staff_messages (the
-- insert's WITH CHECK, the rows an INSERT … RETURNING gives back, reads and marks) and by the
-- double-send guard. As a LANGUAGE sql function that cannot be inlined (SECURITY DEFINER, its
-- own search_path) it was planned again at every call site of every statement: a send that
-- commits alone paid four plans of ~90 µs each, ~370 µs of PostgreSQL's ~3 ms per send
-- (pg_stat_statements with track = all and track_planning, `PG_STATEMENTS=… scripts/bench.sh`,
-- docs/performance.md). PL/pgSQL prepares the probe once per session and keeps it. A plan kept
-- must not go stale: made while event_access held two rows and had been analysed, it was a
-- sequential scan, still used once the table held 200,000 (19 ms a call, found in review). So
-- sequential scans are off for it: the probe is a lookup of event_access's primary key
-- (event_id, user_id) whatever the table's size. Same arguments, result, volatility and rights
-- as sql/001's.
CREATE OR REPLACE FUNCTION staffcast_has_access(p_event uuid, p_levels text[]) RETURNS boolean
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = public, pg_temp SET enable_seqscan = off AS $$
BEGIN
    RETURN EXISTS (SELECT 1 FROM event_access a
                   WHERE a.event_id = p_event
                     AND a.user_id = staffcast_current_user()
                     AND a.access_level = ANY (p_levels));
END $$;

-- The double-send guard keeps its plan for the session too. As LANGUAGE sql (sql/013) it was
-- parsed and planned again by every INSERT that called it: ~340 µs of PostgreSQL per send
-- batch, the largest cost of a send that commits alone. A plan kept for the session is safe
-- only if it cannot go stale: PL/pgSQL's generic plan, made while staff_messages is empty,
-- took staff_messages_event_sender (event_id only) over staff_messages_event_text (event_id and
-- the text's md5) for the LIMIT 1 probe (sql/013's note), and then read every message of the
-- event per probe as the log grew. So the probe now has exactly one index it can use: the key
-- (md5 of the event and the text, sent_at) replaces staff_messages_event_text, the event is
-- compared as text (which no event_id index can serve), and a sequential scan is ruled out for
-- the function's statements. Checked with EXPLAIN of the generic plan on an empty table. The
-- plan is generic from the first call (force_generic_plan): left to choose, PL/pgSQL kept
-- planning it per call, since a plan for the actual one-element arrays looks cheaper.
-- The table's strongest lock first, before the index is built: a send of a server of the
-- previous release still running (a rolling upgrade) has read staff_messages before it inserts,
-- and CREATE INDEX's share lock then DROP INDEX's exclusive one deadlocked with it (found in
-- review, reproduced with three sessions). Sends wait for the build (well under a second for
-- 100,000 messages) and go on.
LOCK TABLE staff_messages IN ACCESS EXCLUSIVE MODE;
CREATE INDEX staff_messages_duplicate_key ON staff_messages (md5(event_id::text || message), sent_at);
DROP INDEX staff_messages_event_text;

CREATE OR REPLACE FUNCTION staffcast_duplicate_ords(p_ords int[], p_events uuid[], p_texts text[], p_window int, p_excluding uuid[])
RETURNS int[]
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = public, pg_temp
SET enable_seqscan = off SET plan_cache_mode = force_generic_plan AS $$
BEGIN
    IF p_window <= 0 THEN
        RETURN '{}';
    END IF;
    RETURN (SELECT coalesce(array_agg(x.ord ORDER BY x.ord), '{}')
            FROM unnest(p_ords, p_events, p_texts) AS x(ord, event_id, message)
            WHERE x.message IS NOT NULL
              AND staffcast_has_access(x.event_id, ARRAY['admin','owner'])
              AND (SELECT 1 FROM staff_messages d
                   WHERE md5(d.event_id::text || d.message) = md5(x.event_id::text || x.message)
                     AND d.sent_at > now() - make_interval(mins => p_window)
                     AND d.event_id::text = x.event_id::text AND d.message = x.message
                     AND d.retracted_at IS NULL
                     AND d.id <> ALL (coalesce(p_excluding, '{}'))
                   LIMIT 1) IS NOT NULL);
END $$;

-- A send batch for the server's own fan-out begins with one prepared statement instead of two
-- (Store.commitSends): the gate shared, the message log's lock, the batch's origin, then where
-- the three logs stand. Read in the statement after the locks (sql/014), the positions were a
-- statement without parameters, which the server does not prepare: parsed, analysed and planned
-- for every batch (pgbench here: ~0.4 ms a call more than prepared). VOLATILE, so each query
-- below takes a fresh snapshot once the locks are held: the maxima are exactly what committed
-- before the batch. staffcast_log_positions (sql/014) stays for servers of the previous release
-- during a rolling upgrade.
CREATE FUNCTION staffcast_begin_send_batch(p_origin text, OUT messages_through bigint, OUT access_through bigint, OUT token_through bigint)
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    PERFORM pg_advisory_xact_lock_shared(7354000, 0); -- the gate (access and token changes)
    PERFORM pg_advisory_xact_lock(7354000, 1);        -- the message log
    PERFORM set_config('staffcast.origin', p_origin, true);
    SELECT max(seq) INTO messages_through FROM staff_messages;
    SELECT max(seq) INTO access_through FROM access_changes;
    SELECT max(seq) INTO token_through FROM token_changes;
END $$;
REVOKE ALL ON FUNCTION staffcast_begin_send_batch(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION staffcast_begin_send_batch(text) TO staffcast_server;
