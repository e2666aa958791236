-- The double-send guard once per INSERT statement, planned with it (issue 21, the durable path).
--
-- Measured in the bench (sendrate, pg_stat_statements, pg_stat_user_indexes):
-- staffcast_duplicate_exists (plpgsql, sql/010) kept the generic plan PL/pgSQL cached at a
-- database worker's first sends, made while staff_messages was nearly empty and never analysed:
-- an index scan of staff_messages_event_sender that walks every message of the event. Each
-- guarded send cost ~1 ms of PostgreSQL CPU at 10,000 messages, and more as the log grew.
--
-- A LANGUAGE sql function is planned when the statement that calls it runs, against the
-- statistics of the moment, and its plan lives only as long as that statement. The batch form
-- is called once per INSERT (one probe of staff_messages_event_text per guarded row, the
-- sender's access checked per row as before), not once per row with a security-definer switch.

-- The ords (of p_ords) whose text went to their event within p_window minutes and was not
-- retracted, not counting p_excluding (the batch's own rows). Rows of an event the caller may
-- not send to are never reported (they are refused by the insert's policy instead).
-- The probe is a scalar subquery with LIMIT 1, never turned into a join: it runs per guarded
-- row as a probe of staff_messages_event_text (event_id, md5(message), sent_at). Written as
-- EXISTS it was pulled up into a hashed semi-join that read every message of the window once
-- per INSERT (~3.3 ms per batch on a 15,000-message log, whatever the batch's size).
CREATE FUNCTION staffcast_duplicate_ords(p_ords int[], p_events uuid[], p_texts text[], p_window int, p_excluding uuid[])
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
REVOKE ALL ON FUNCTION staffcast_duplicate_ords(int[], uuid[], text[], int, uuid[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION staffcast_duplicate_ords(int[], uuid[], text[], int, uuid[]) TO staffcast_app;

-- The single send's guard (Store.send) the same way: SQL, planned with its statement, so no
-- plan cached while the table was empty outlives the table's growth.
CREATE OR REPLACE FUNCTION staffcast_duplicate_exists(p_event uuid, p_text text, p_window int, p_excluding uuid[])
RETURNS boolean
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
    SELECT cardinality(staffcast_duplicate_ords(ARRAY[1], ARRAY[p_event], ARRAY[p_text], p_window, p_excluding)) > 0
$$;

-- Push and email expansion follows the message log with one cursor instead of a `fanout` outbox
-- row per message. The row (inserted by the send, then updated to done by the expansion, with
-- five indexes and a foreign key) cost ~80 µs of PostgreSQL per message in the bench; the
-- cursor costs one row update per expansion pass. `seq` is commit order (the log's advisory
-- lock, sql/001), so every message past the cursor is committed after everything before it.
-- Servers take the cursor with FOR UPDATE SKIP LOCKED: one expands at a time, as before.
CREATE TABLE fanout_cursor (
    only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    seq      bigint NOT NULL
);
-- Expansion goes on where the fanout rows left off: before the first message still pending.
INSERT INTO fanout_cursor (seq)
SELECT coalesce((SELECT min(m.seq) - 1 FROM outbox o JOIN staff_messages m ON m.id = o.message_id
                 WHERE o.kind = 'fanout' AND o.status = 'pending'),
                (SELECT max(seq) FROM staff_messages), 0);
UPDATE outbox SET status = 'done', done_at = now() WHERE kind = 'fanout' AND status = 'pending';
GRANT SELECT ON fanout_cursor TO staffcast_server;
GRANT UPDATE ON fanout_cursor TO staffcast_server;

-- A committed message: its webhook deliveries, in the send's own transaction (push and email
-- are expanded from the log past fanout_cursor).
CREATE OR REPLACE FUNCTION staffcast_outbox_after_send() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM webhooks w WHERE w.event_id IN (SELECT n.event_id FROM new_rows n)) THEN
        PERFORM staffcast_enqueue_webhooks(n.event_id, 'message', jsonb_build_object(
                    'id', n.id, 'seq', n.seq, 'event_id', n.event_id, 'sender_id', n.sender_id,
                    'sender_name', p.display_name, 'message', n.message, 'message_type', n.message_type,
                    'priority', n.priority, 'sent_at', staffcast_rfc3339(n.sent_at),
                    'expires_at', staffcast_rfc3339(n.expires_at), 'escalate_after_minutes', n.escalate_after_minutes))
        FROM new_rows n JOIN profiles p ON p.id = n.sender_id ORDER BY n.seq;
    END IF;
    RETURN NULL;
END $$;
