-- Reaching staff where they are (issue 16, docs/protocol.md "Reaching staff"): Web Push
-- subscriptions, email addresses, signed webhooks, one durable outbox for all three, and the
-- delivery funnel (who was reached how).

-- Staff may have an email address (email for the unreached). Set by `staffcast admin user`.
ALTER TABLE profiles ADD COLUMN email text
    CHECK (email IS NULL OR (length(email) BETWEEN 3 AND 254 AND email ~ '^[^@[:space:]<>,;]+@[^@[:space:]<>,;]+$'));

-- A browser's PushSubscription (RFC 8030 endpoint, RFC 8291 keys), one row per device. The same
-- endpoint posted again by its user replaces the keys.
CREATE TABLE push_subscriptions (
    id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    user_id    uuid NOT NULL REFERENCES profiles(id) ON DELETE CASCADE,
    endpoint   text NOT NULL CHECK (length(endpoint) BETWEEN 9 AND 2048),
    p256dh     text NOT NULL CHECK (length(p256dh) <= 200),
    auth       text NOT NULL CHECK (length(auth) <= 100),
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (user_id, endpoint)
);

-- Webhooks of an event (owners only): where to POST, which kinds of change, and the secret the
-- body is signed with (never read back through the API).
CREATE TABLE webhooks (
    id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    event_id   uuid NOT NULL REFERENCES events(id) ON DELETE CASCADE,
    url        text NOT NULL CHECK (length(url) BETWEEN 8 AND 2048),
    events     text[] NOT NULL CHECK (cardinality(events) > 0
                                      AND events <@ ARRAY['message','receipt','reply','answer','escalation']),
    secret     text NOT NULL CHECK (length(secret) BETWEEN 1 AND 500),
    created_by uuid REFERENCES profiles(id) ON DELETE SET NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhooks_event ON webhooks (event_id);

-- The outbox: everything that must still be pushed, emailed or POSTed is a row here until it is
-- done, so nothing is lost on a restart. A server claims due rows with FOR UPDATE SKIP LOCKED and
-- leases them (lease_until) while it delivers outside the transaction; a lease that runs out
-- (the server died) makes the row due again. Kinds:
--   fanout  – a committed message not yet turned into push and email rows (written by the send's
--             own transaction, below); expanded by one server
--   push    – one message to one push subscription
--   email   – one message to one person, not before next_attempt_at (sent_at + email_after_seconds),
--             skipped if they read it by then; at most one per (message, person)
--   webhook – one change to one webhook; delivered in id order per webhook (a row waits while an
--             earlier one of its webhook is pending)
CREATE TABLE outbox (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    kind            text NOT NULL CHECK (kind IN ('fanout', 'push', 'email', 'webhook')),
    event_id        uuid,
    message_id      uuid REFERENCES staff_messages(id) ON DELETE CASCADE,
    user_id         uuid REFERENCES profiles(id) ON DELETE CASCADE,
    subscription_id uuid REFERENCES push_subscriptions(id) ON DELETE CASCADE,
    webhook_id      uuid REFERENCES webhooks(id) ON DELETE CASCADE,
    change_type     text,
    payload         text,
    delivery_id     uuid NOT NULL DEFAULT gen_random_uuid() UNIQUE,
    -- 0 first: pushes and emails of urgent or emergency messages go before a backlog of others.
    urgency         smallint NOT NULL DEFAULT 1,
    attempts        integer NOT NULL DEFAULT 0,
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    give_up_at      timestamptz NOT NULL DEFAULT now() + interval '1 day',
    lease_until     timestamptz,
    leased_by       text,
    status          text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'done', 'failed', 'skipped')),
    last_error      text,
    created_at      timestamptz NOT NULL DEFAULT now(),
    done_at         timestamptz
);
CREATE INDEX outbox_due ON outbox (urgency, next_attempt_at, id) WHERE status = 'pending';
CREATE INDEX outbox_webhook_pending ON outbox (webhook_id, id) WHERE status = 'pending' AND kind = 'webhook';
CREATE INDEX outbox_webhook_recent ON outbox (webhook_id, id DESC) WHERE kind = 'webhook';
CREATE INDEX outbox_finished ON outbox (done_at) WHERE status <> 'pending';
CREATE UNIQUE INDEX outbox_push_once ON outbox (message_id, subscription_id) WHERE kind = 'push';
CREATE UNIQUE INDEX outbox_email_once ON outbox (message_id, user_id) WHERE kind = 'email';
CREATE UNIQUE INDEX outbox_fanout_once ON outbox (message_id) WHERE kind = 'fanout';

-- Every attempt at a webhook delivery (GET /v1/events/{id}/webhooks/{id}/deliveries).
CREATE TABLE webhook_attempts (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    webhook_id  uuid NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
    event_id    uuid NOT NULL,
    delivery_id uuid NOT NULL,
    change_type text NOT NULL,
    attempt     integer NOT NULL,
    at          timestamptz NOT NULL DEFAULT now(),
    status_code integer,
    error       text,
    outcome     text NOT NULL CHECK (outcome IN ('delivered', 'retry', 'failed'))
);
CREATE INDEX webhook_attempts_recent ON webhook_attempts (webhook_id, id DESC);

-- The delivery funnel: how each person was reached by each message (live: subscribed to the
-- event when it was committed; push: the push service accepted it; email: the SMTP server did).
CREATE TABLE message_reach (
    message_id uuid NOT NULL REFERENCES staff_messages(id) ON DELETE CASCADE,
    user_id    uuid NOT NULL REFERENCES profiles(id) ON DELETE CASCADE,
    via        text NOT NULL CHECK (via IN ('live', 'push', 'email')),
    at         timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (message_id, user_id, via)
);

-- The audience of a message: who it is for. Everyone with access to its event but the sender;
-- for a message to teams (sql/011), only those of them in its audience as fixed when it was
-- sent (message_audience), so a push or email never carries it to anyone else.
CREATE FUNCTION staffcast_message_audience(p_message uuid) RETURNS TABLE (user_id uuid)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
    SELECT a.user_id FROM staff_messages m JOIN event_access a ON a.event_id = m.event_id
    WHERE m.id = p_message AND a.user_id <> m.sender_id
      AND (m.teams = '{}' OR EXISTS (SELECT 1 FROM message_audience ma
                                     WHERE ma.message_id = m.id AND ma.user_id = a.user_id))
$$;

-- RFC 3339 UTC with milliseconds, as the API prints times.
CREATE FUNCTION staffcast_rfc3339(t timestamptz) RETURNS text LANGUAGE sql IMMUTABLE AS $$
    SELECT to_char(t AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
$$;

-- Queues one webhook delivery of `p_type` for every webhook of the event that asked for it.
-- Called by the triggers below (and by whatever else later has a change to tell, e.g. answers).
CREATE FUNCTION staffcast_enqueue_webhooks(p_event uuid, p_type text, p_data jsonb) RETURNS void
LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = public, pg_temp AS $$
    INSERT INTO outbox (kind, event_id, webhook_id, change_type, payload, give_up_at)
    SELECT 'webhook', w.event_id, w.id, p_type,
           jsonb_build_object('type', p_type, 'event_id', w.event_id, 'data', p_data)::text,
           now() + interval '24 hours'
    FROM webhooks w WHERE w.event_id = p_event AND p_type = ANY (w.events)
    ORDER BY w.id
$$;
REVOKE ALL ON FUNCTION staffcast_enqueue_webhooks(uuid, text, jsonb) FROM PUBLIC;

-- A committed message: one fanout row (expanded into push and email rows by a server) and its
-- webhook deliveries, in the send's own transaction.
CREATE FUNCTION staffcast_outbox_after_send() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
    INSERT INTO outbox (kind, event_id, message_id) SELECT 'fanout', n.event_id, n.id FROM new_rows n ORDER BY n.seq;
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
CREATE TRIGGER staff_messages_outbox AFTER INSERT ON staff_messages
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION staffcast_outbox_after_send();

CREATE FUNCTION staffcast_outbox_after_read() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM webhooks w WHERE w.event_id IN (SELECT n.event_id FROM new_rows n)
                                          AND 'receipt' = ANY (w.events)) THEN
        PERFORM staffcast_enqueue_webhooks(n.event_id, 'receipt', jsonb_build_object(
                    'message_id', n.message_id, 'event_id', n.event_id, 'user_id', n.user_id,
                    'display_name', p.display_name, 'read_at', staffcast_rfc3339(n.read_at)))
        FROM new_rows n JOIN profiles p ON p.id = n.user_id ORDER BY n.seq;
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER message_reads_outbox AFTER INSERT ON message_reads
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION staffcast_outbox_after_read();

CREATE FUNCTION staffcast_outbox_after_reply() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM webhooks w WHERE w.event_id IN (SELECT n.event_id FROM new_rows n)
                                          AND 'reply' = ANY (w.events)) THEN
        PERFORM staffcast_enqueue_webhooks(n.event_id, 'reply', jsonb_build_object(
                    'message_id', n.message_id, 'event_id', n.event_id, 'user_id', n.user_id,
                    'display_name', p.display_name, 'status', n.status, 'text', n.text,
                    'replied_at', staffcast_rfc3339(n.replied_at)))
        FROM new_rows n JOIN profiles p ON p.id = n.user_id ORDER BY n.seq;
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER message_replies_outbox AFTER INSERT ON message_replies
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION staffcast_outbox_after_reply();

CREATE FUNCTION staffcast_outbox_after_round() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM webhooks w WHERE w.event_id IN (SELECT n.event_id FROM new_rows n)
                                          AND 'escalation' = ANY (w.events)) THEN
        PERFORM staffcast_enqueue_webhooks(n.event_id, 'escalation', jsonb_build_object(
                    'message_id', n.message_id, 'event_id', n.event_id, 'round', n.round,
                    'at', staffcast_rfc3339(n.at),
                    'unread_by', coalesce((SELECT jsonb_agg(jsonb_build_object('user_id', p.id, 'display_name', p.display_name)
                                                            ORDER BY p.display_name, p.id)
                                           FROM profiles p WHERE p.id = ANY (n.unread)), '[]'::jsonb)))
        FROM new_rows n ORDER BY n.seq;
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER escalation_rounds_outbox AFTER INSERT ON escalation_rounds
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION staffcast_outbox_after_round();

-- Row-level security. A user manages their own push subscriptions; an event's owners manage its
-- webhooks and see their attempts; admins and owners see the funnel of their events' messages.
-- The server's own login does the deliveries.
ALTER TABLE push_subscriptions ENABLE ROW LEVEL SECURITY;
ALTER TABLE push_subscriptions FORCE ROW LEVEL SECURITY;
ALTER TABLE webhooks           ENABLE ROW LEVEL SECURITY;
ALTER TABLE webhooks           FORCE ROW LEVEL SECURITY;
ALTER TABLE webhook_attempts   ENABLE ROW LEVEL SECURITY;
ALTER TABLE webhook_attempts   FORCE ROW LEVEL SECURITY;
ALTER TABLE message_reach      ENABLE ROW LEVEL SECURITY;
ALTER TABLE message_reach      FORCE ROW LEVEL SECURITY;
ALTER TABLE outbox             ENABLE ROW LEVEL SECURITY;
ALTER TABLE outbox             FORCE ROW LEVEL SECURITY;
CREATE POLICY owner_all ON push_subscriptions TO PUBLIC USING (current_user <> 'staffcast_app');
CREATE POLICY owner_all ON webhooks           TO PUBLIC USING (current_user <> 'staffcast_app');
CREATE POLICY owner_all ON webhook_attempts   TO PUBLIC USING (current_user <> 'staffcast_app');
CREATE POLICY owner_all ON message_reach      TO PUBLIC USING (current_user <> 'staffcast_app');
CREATE POLICY owner_all ON outbox             TO PUBLIC USING (current_user <> 'staffcast_app');
CREATE POLICY own_subscriptions ON push_subscriptions TO staffcast_app
    USING (user_id = staffcast_current_user()) WITH CHECK (user_id = staffcast_current_user());
CREATE POLICY owners_webhooks ON webhooks TO staffcast_app
    USING (staffcast_has_access(event_id, ARRAY['owner']))
    WITH CHECK (staffcast_has_access(event_id, ARRAY['owner']) AND created_by = staffcast_current_user());
CREATE POLICY owners_attempts ON webhook_attempts FOR SELECT TO staffcast_app
    USING (staffcast_has_access(event_id, ARRAY['owner']));
CREATE POLICY read_event_reach ON message_reach FOR SELECT TO staffcast_app
    USING (EXISTS (SELECT 1 FROM staff_messages m WHERE m.id = message_id
                   AND staffcast_has_access(m.event_id, ARRAY['admin','owner'])));
GRANT SELECT, INSERT, UPDATE (p256dh, auth), DELETE ON push_subscriptions TO staffcast_app;
-- The secret is written, never read back, by users.
GRANT SELECT (id, event_id, url, events, created_by, created_at), INSERT, DELETE ON webhooks TO staffcast_app;
GRANT SELECT ON webhook_attempts, message_reach TO staffcast_app;

GRANT SELECT, DELETE ON push_subscriptions TO staffcast_server;
GRANT SELECT ON webhooks TO staffcast_server;
GRANT SELECT, INSERT, UPDATE, DELETE ON outbox TO staffcast_server;
GRANT SELECT, INSERT ON webhook_attempts, message_reach TO staffcast_server;
GRANT EXECUTE ON FUNCTION staffcast_message_audience(uuid) TO staffcast_server, staffcast_app;
