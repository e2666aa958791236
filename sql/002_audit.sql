-- Audit trail of access and token changes: who did what, when. Written in the same
-- transaction as the change itself, so a change is never without its record.
CREATE TABLE audit_log (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at         timestamptz NOT NULL DEFAULT now(),
    actor      text NOT NULL,          -- the operating-system user who ran the command
    action     text NOT NULL CHECK (action IN ('grant', 'revoke', 'token_issue')),
    event_id   uuid,
    user_id    uuid,
    detail     text
);
CREATE INDEX audit_log_at ON audit_log (at DESC);
