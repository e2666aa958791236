-- Only a live invite takes the access gate (found in review of sql/018).
--
-- sql/018's redeem took the gate (sql/014; sends take it shared) before it even looked at the
-- code, so every redeem, of an unknown, revoked, expired or used-up code too, held up every
-- send and batch on every server for a moment: a flood of bogus codes, or a crowd of staff
-- joining at doors-open, serialised against sends. Before sql/018 only a redeem that granted
-- something took the gate (through the change-log triggers of what it writes). Now the code is
-- looked up first without a lock; only a live invite takes the gate, then its row lock, and is
-- checked again under them (the gate-first order is kept). Whatever is not live is answered by
-- sql/009's redeem as before, without the gate.
CREATE OR REPLACE FUNCTION staffcast_redeem_invite(p_code_hash bytea, p_user uuid, p_display_name text, p_token_hash bytea)
RETURNS TABLE (outcome text, event_id uuid, access_level text)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = public, pg_temp AS $$
#variable_conflict use_column
DECLARE
    i invites%ROWTYPE;
    creator_level text;
BEGIN
    SELECT * INTO i FROM invites WHERE code_hash = p_code_hash;
    IF FOUND AND i.revoked_at IS NULL AND i.expires_at > now() AND i.uses < i.max_uses THEN
        PERFORM pg_advisory_xact_lock(7354000, 0); -- the gate (access_changes, token_changes)
        SELECT * INTO i FROM invites WHERE code_hash = p_code_hash FOR UPDATE;
        -- Checked again under the locks: it may have been revoked or used up meanwhile.
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
    END IF;
    RETURN QUERY SELECT * FROM staffcast_redeem_invite_unchecked(p_code_hash, p_user, p_display_name, p_token_hash);
END $$;
