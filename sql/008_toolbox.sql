-- The organiser's toolbox (issue 11, CONTRACT §6): scheduled sends, and what search and the
-- double-send guard need.

-- Scheduled sends. A row is written when an admin or owner schedules a send; any server's
-- scheduler claims due rows with FOR UPDATE SKIP LOCKED, inserts the message as the row's
-- sender (row-level security judges it then, so a sender who lost access sends nothing) and
-- marks the row sent in the same transaction: each row is sent exactly once, whatever the
-- number of servers, and a row due while every server was down is sent (marked late) by the
-- first server that starts.
CREATE TABLE scheduled_messages (
    id                 uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    event_id           uuid NOT NULL REFERENCES events(id) ON DELETE CASCADE,
    sender_id          uuid NOT NULL REFERENCES profiles(id),
    message            text NOT NULL CHECK (length(message) > 0 AND octet_length(message) <= 4096),
    message_type       text NOT NULL CHECK (message_type IN ('broadcast','alert','emergency')),
    priority           text NOT NULL CHECK (priority IN ('low','normal','high','urgent')),
    expires_in_minutes integer CHECK (expires_in_minutes BETWEEN 1 AND 43200),
    send_at            timestamptz NOT NULL,
    status             text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending','sent','cancelled')),
    message_id         uuid REFERENCES staff_messages(id),
    -- Sent more than a minute after send_at (every server was down at its time).
    late               boolean NOT NULL DEFAULT false,
    -- Why a row was cancelled by the scheduler rather than by a person (e.g. access ended).
    note               text,
    created_at         timestamptz NOT NULL DEFAULT now(),
    done_at            timestamptz
);
-- The scheduler's scan: pending rows by time.
CREATE INDEX scheduled_messages_due ON scheduled_messages (send_at) WHERE status = 'pending';
CREATE INDEX scheduled_messages_event ON scheduled_messages (event_id, send_at);

ALTER TABLE scheduled_messages ENABLE ROW LEVEL SECURITY;
ALTER TABLE scheduled_messages FORCE ROW LEVEL SECURITY;
CREATE POLICY owner_all ON scheduled_messages TO PUBLIC USING (current_user <> 'staffcast_app');
-- Only admins and owners of the event see, schedule and cancel; staff see none of it.
CREATE POLICY read_scheduled ON scheduled_messages FOR SELECT TO staffcast_app
    USING (staffcast_has_access(event_id, ARRAY['admin','owner']));
CREATE POLICY schedule_messages ON scheduled_messages FOR INSERT TO staffcast_app
    WITH CHECK (sender_id = staffcast_current_user()
                AND status = 'pending'
                AND staffcast_has_access(event_id, ARRAY['admin','owner']));
CREATE POLICY cancel_scheduled ON scheduled_messages FOR UPDATE TO staffcast_app
    USING (staffcast_has_access(event_id, ARRAY['admin','owner']))
    WITH CHECK (staffcast_has_access(event_id, ARRAY['admin','owner']) AND status = 'cancelled');
GRANT SELECT, INSERT ON scheduled_messages TO staffcast_app;
GRANT UPDATE (status, done_at) ON scheduled_messages TO staffcast_app;

-- Search: the archive of one event by time (expired messages stay stored and are found with
-- include_expired), and by sender.
CREATE INDEX staff_messages_event_sent ON staff_messages (event_id, sent_at);

-- The double-send guard looks for the same text on the same event in the last minutes.
CREATE INDEX staff_messages_event_text ON staff_messages (event_id, md5(message), sent_at);

-- Edit and retract (CONTRACT §6): when a message was last corrected, and when it was
-- retracted. A retracted message leaves history, catch-up, search and unread counts, and
-- escalation stops for it (retracted_at IS NOT NULL).
ALTER TABLE staff_messages ADD COLUMN edited_at timestamptz, ADD COLUMN retracted_at timestamptz;
