-- A reconnecting client's subscribe reads the edits and retracts of its event since about when
-- it was last connected (Store.subscribeBatch, missedChanges): by event and time, which the
-- audit log's only index (message_id, seq) cannot answer without reading the whole log.
CREATE INDEX message_changes_event_time ON message_changes (event_id, changed_at);
