-- Who is connected where, so that `staffcast status --event` on any server sees the staff
-- connected to every server. Each server replaces its own rows every few seconds; rows of a
-- server that stopped refreshing (crashed) are ignored after 30 s. UNLOGGED: it is rebuilt
-- continuously and need not survive a database crash.
CREATE UNLOGGED TABLE presence (
    node            text NOT NULL,
    connection_id   bigint NOT NULL,
    user_id         uuid NOT NULL,
    event_id        uuid NOT NULL,
    connected_since timestamptz NOT NULL,
    rtt_ms          double precision,
    seen_at         timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (node, connection_id, event_id)
);
CREATE INDEX presence_event ON presence (event_id, user_id);
