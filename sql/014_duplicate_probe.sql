-- The double-send guard probes the index once per guarded row (issue 21, the durable path).
--
-- Measured in the bench (EXPLAIN ANALYZE of the send batch on a 15,000-message log): 013's
-- EXISTS was pulled up into a hashed semi-join, which reads every message of the window once
-- per INSERT: ~3.3 ms per batch whatever its size, growing with the log. A scalar subquery
-- with LIMIT 1 is never turned into a join: it runs per guarded row as a probe of
-- staff_messages_event_text (event_id, md5(message), sent_at).
CREATE OR REPLACE FUNCTION staffcast_duplicate_ords(p_ords int[], p_events uuid[], p_texts text[], p_window int, p_excluding uuid[])
RETURNS int[]
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
    SELECT coalesce(array_agg(x.ord ORDER BY x.ord), '{}')
    FROM unnest(p_ords, p_events, p_texts) AS x(ord, event_id, message)
    WHERE p_window > 0 AND x.message IS NOT NULL
      AND staffcast_has_access(x.event_id, ARRAY['admin','owner'])
      AND (SELECT 1 FROM staff_messages d
           WHERE d.event_id = x.event_id AND md5(d.message) = md5(x.message) AND d.message = x.message
             AND d.sent_at > now() - make_interval(mins => p_window) AND d.retracted_at IS NULL
             AND d.id <> ALL (coalesce(p_excluding, '{}'))
           LIMIT 1) IS NOT NULL
$$;
