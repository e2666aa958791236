-- Rules that follow access as it is now, not as it was.
--
-- 1. An invite works only while its creator could still make it (docs/security.md, Invites).
-- Until now the level was checked only when the invite was made: an admin who made an admin
-- invite and was then demoted, had their access revoked or was deleted left a link that still
-- granted admin. Now the redeem checks the creator's access on the event as it is at that
-- moment, in the same transaction as the grant.

-- created_by NULL meant "made from the shell", but deleting the creator's profile also sets it
-- to NULL (ON DELETE SET NULL). This flag keeps the two apart: set when a creator's profile goes.
ALTER TABLE invites ADD COLUMN creator_deleted boolean NOT NULL DEFAULT false;

CREATE FUNCTION staffcast_invite_creator_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.creator_deleted := true;
    RETURN NEW;
END $$;
-- The foreign key's SET NULL is an UPDATE of invites, so this row trigger sees it.
CREATE TRIGGER invites_creator_deleted BEFORE UPDATE OF created_by ON invites
    FOR EACH ROW WHEN (OLD.created_by IS NOT NULL AND NEW.created_by IS NULL)
    EXECUTE FUNCTION staffcast_invite_creator_deleted();

-- The redeem of sql/009 keeps its checks and its work, under a new name only this function may
-- call; staffcast_redeem_invite now first checks the creator of a live invite someone made (not
-- from the shell): gone or without access to the event (creator_gone), or no longer admin or
-- owner at least at the invite's level (creator_demoted), and refuses. Otherwise it hands on.
-- The access gate (sql/014) is taken first, as every writer of event_access takes it (and the
-- redeem writes one): a grant, demotion, revoke or user delete on any server then either
-- committed before the creator's access is read here, or waits until this redeem commits. It
-- comes before the invite's row lock, in the gate-first order Store.deleteUser keeps (whose
-- profile delete updates invites through the foreign key).
ALTER FUNCTION staffcast_redeem_invite(bytea, uuid, text, bytea) RENAME TO staffcast_redeem_invite_unchecked;
REVOKE ALL ON FUNCTION staffcast_redeem_invite_unchecked(bytea, uuid, text, bytea) FROM PUBLIC, staffcast_server;

CREATE FUNCTION staffcast_redeem_invite(p_code_hash bytea, p_user uuid, p_display_name text, p_token_hash bytea)
RETURNS TABLE (outcome text, event_id uuid, access_level text)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = public, pg_temp AS $$
#variable_conflict use_column
DECLARE
    i invites%ROWTYPE;
    creator_level text;
BEGIN
    PERFORM pg_advisory_xact_lock(7354000, 0); -- the gate (access_changes, token_changes)
    SELECT * INTO i FROM invites WHERE code_hash = p_code_hash FOR UPDATE;
    -- An unknown, revoked, expired or used-up invite is answered as before, by the old function.
    IF FOUND AND i.revoked_at IS NULL AND i.expires_at > now() AND i.uses < i.max_uses
       AND (i.created_by IS NOT NULL OR i.creator_deleted) THEN
        SELECT a.access_level INTO creator_level FROM event_access a
        WHERE a.event_id = i.event_id AND a.user_id = i.created_by;
        IF creator_level IS NULL THEN
            RETURN QUERY SELECT 'creator_gone'::text, i.event_id, i.access_level;
            RETURN;
        ELSIF creator_level NOT IN ('admin','owner')
              OR staffcast_level_rank(creator_level) < staffcast_level_rank(i.access_level) THEN
            RETURN QUERY SELECT 'creator_demoted'::text, i.event_id, i.access_level;
            RETURN;
        END IF;
    END IF;
    RETURN QUERY SELECT * FROM staffcast_redeem_invite_unchecked(p_code_hash, p_user, p_display_name, p_token_hash);
END $$;
REVOKE ALL ON FUNCTION staffcast_redeem_invite(bytea, uuid, text, bytea) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION staffcast_redeem_invite(bytea, uuid, text, bytea) TO staffcast_server;

-- 2. Receipts of a targeted message count its audience as it is now: those in it who still have
-- access to the event (but the sender), as for a message to the whole event and as escalation
-- does (Store.runDueEscalations). Until now a member whose access was revoked stayed "unread"
-- for ever, and `staffcast receipts --watch` never ended. Whoever read it is still listed, with
-- access or not, as before.
-- One query for both kinds now: the recipients (those with access, narrowed to the audience for
-- a targeted message; a pseudo-constant filter drops the other arm at run time), each with their
-- read, then readers who are not recipients (or are the sender).
CREATE OR REPLACE FUNCTION staffcast_receipts(p_message uuid)
RETURNS TABLE (user_id uuid, display_name text, read_at timestamptz)
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    v_event    uuid;
    v_sender   uuid;
    v_targeted boolean;
BEGIN
    SELECT m.event_id, m.sender_id, cardinality(m.teams) > 0 INTO v_event, v_sender, v_targeted
    FROM staff_messages m WHERE m.id = p_message;
    IF v_event IS NULL OR NOT staffcast_has_access(v_event, ARRAY['admin','owner']) THEN
        RETURN;
    END IF;
    RETURN QUERY
        SELECT w.id, w.display_name, w.read_at FROM (
            SELECT p.id, p.display_name, r.read_at
            FROM (SELECT a.user_id FROM event_access a WHERE NOT v_targeted AND a.event_id = v_event
                  UNION ALL
                  SELECT ma.user_id FROM message_audience ma
                  JOIN event_access a ON a.event_id = v_event AND a.user_id = ma.user_id
                  WHERE v_targeted AND ma.message_id = p_message) x
            JOIN profiles p ON p.id = x.user_id
            LEFT JOIN message_reads r ON r.message_id = p_message AND r.user_id = x.user_id
            WHERE x.user_id <> v_sender
            UNION ALL
            SELECT p.id, p.display_name, r.read_at
            FROM message_reads r JOIN profiles p ON p.id = r.user_id
            WHERE r.message_id = p_message
              AND (r.user_id = v_sender
                   OR NOT EXISTS (SELECT 1 FROM event_access a
                                  WHERE a.event_id = v_event AND a.user_id = r.user_id
                                    AND (NOT v_targeted
                                         OR EXISTS (SELECT 1 FROM message_audience ma
                                                    WHERE ma.message_id = p_message AND ma.user_id = r.user_id))))
        ) w
        ORDER BY w.display_name, w.id;
END $$;

-- 3. A message's webhook says who it was for and what it asks, with the names and shapes of the
-- Message object (StaffMessage): `teams` (the teams and zones it was sent to; [] for the whole
-- event) and `poll` ({"options": [...]} or null). Without them a receiver could not tell a
-- message to Security alone from one to everyone. As sql/013 otherwise.
CREATE OR REPLACE FUNCTION staffcast_outbox_after_send() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM webhooks w WHERE w.event_id IN (SELECT n.event_id FROM new_rows n)) THEN
        PERFORM staffcast_enqueue_webhooks(n.event_id, 'message', jsonb_build_object(
                    'id', n.id, 'seq', n.seq, 'event_id', n.event_id, 'sender_id', n.sender_id,
                    'sender_name', p.display_name, 'message', n.message, 'message_type', n.message_type,
                    'priority', n.priority, 'sent_at', staffcast_rfc3339(n.sent_at),
                    'expires_at', staffcast_rfc3339(n.expires_at), 'escalate_after_minutes', n.escalate_after_minutes,
                    'teams', to_jsonb(n.teams),
                    'poll', CASE WHEN n.poll_options IS NULL THEN NULL
                                 ELSE jsonb_build_object('options', to_jsonb(n.poll_options)) END))
        FROM new_rows n JOIN profiles p ON p.id = n.sender_id ORDER BY n.seq;
    END IF;
    RETURN NULL;
END $$;
