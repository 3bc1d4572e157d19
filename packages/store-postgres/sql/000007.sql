-- No query reads events by position alone: a session's through events_by_session (session_id,
-- position), a call's through (call_id, seq). The index of the position key only cost every
-- event one more entry, on the last page that every writer shares. (call_id, seq), unique and
-- not null, identifies a row (for logical replication too) without rebuilding an index.
ALTER TABLE events DROP CONSTRAINT events_pkey;
ALTER TABLE events REPLICA IDENTITY USING INDEX events_call_id_seq_key;
