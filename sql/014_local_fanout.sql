-- Fan-out on the committing server (issue 21 item 2): a server hands a batch of sends it has
-- just committed to its own service loops at once, before its change feed reads it back
-- (LocalFanoutGate). It may do so only when every access and token change committed before the
-- batch has been handed on already; so the send transaction must know which those are, and
-- none may commit between its reading them and its own COMMIT.
--
-- The access and token logs now also take one shared "gate" lock, exclusively, before their own
-- (serialised as before: seq order = commit order). A send batch takes the gate in shared mode
-- first: batches do not wait for one another, an access or token change waits for the batches
-- committing at that moment (one transaction of up to 256 sends) and they for it. Read after
-- the gate, max(seq) of each log is exactly what committed before the batch.
--
-- Lock order: the gate before any log's own lock, in every transaction (a send takes the gate,
-- then the message log's lock through its insert's trigger; a writer of access or token changes
-- takes the gate, then its log's). No transaction takes a message-log lock and then the gate,
-- and one that locks rows a send may wait for (a profile: the foreign key of sender_id) before
-- writing access or token changes takes the gate first (Store.deleteUser).
CREATE OR REPLACE FUNCTION staffcast_serialize_log() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_ARGV[0] IN ('3', '4') THEN
        PERFORM pg_advisory_xact_lock(7354000, 0); -- the gate (access_changes, token_changes)
    END IF;
    PERFORM pg_advisory_xact_lock(7354000, TG_ARGV[0]::int);
    RETURN NULL;
END $$;

-- Where the logs stand: the highest seq of the message, access and token logs. A send batch
-- calls it first, as the server's login, after taking the gate (shared) and the message log's
-- lock: everything it reports committed before the batch, and nothing can commit into those
-- logs before the batch does. PL/pgSQL keeps the three plans for the session; as one plain
-- statement, planning cost ~0.2 ms of PostgreSQL CPU per batch.
CREATE FUNCTION staffcast_log_positions(OUT messages_through bigint, OUT access_through bigint, OUT token_through bigint)
LANGUAGE plpgsql STABLE AS $$
BEGIN
    SELECT max(seq) INTO messages_through FROM staff_messages;
    SELECT max(seq) INTO access_through FROM access_changes;
    SELECT max(seq) INTO token_through FROM token_changes;
END $$;
REVOKE ALL ON FUNCTION staffcast_log_positions() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION staffcast_log_positions() TO staffcast_server;

-- A send batch committed for its own server's fan-out says so in its wake-up: it sets
-- staffcast.origin (the server's random id and the batch's number) for its transaction, and the
-- notification becomes 'message@<origin>:<n>' (one per batch: PostgreSQL folds only equal
-- payloads of one transaction). That server's listener may then skip the read when every
-- notification it got names one of its batches that was handed on already (OwnSendBatches);
-- other servers read as before ('message@…' names the message log to them: ChangeLogs.named).
CREATE OR REPLACE FUNCTION staffcast_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('staffcast', TG_ARGV[0] || coalesce('@' || nullif(current_setting('staffcast.origin', true), ''), ''));
    RETURN NULL;
END $$;
