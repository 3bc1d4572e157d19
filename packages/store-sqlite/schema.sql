CREATE TRIGGER event_rows_once BEFORE INSERT ON event_rows
  WHEN NEW.seq > 1 AND (
    SELECT last_seq FROM event_rows
    WHERE call_id = NEW.call_id AND seq <= NEW.last_seq ORDER BY seq DESC LIMIT 1
  ) >= NEW.seq
BEGIN
  SELECT RAISE(ABORT, 'event ' || NEW.seq || ' of call ' || NEW.call_id || ' is stored already');
END;

CREATE TABLE artifacts (
  call_id TEXT NOT NULL,
  name TEXT NOT NULL,
  content TEXT NOT NULL,
  PRIMARY KEY (call_id, name)
) WITHOUT ROWID;

CREATE TABLE calls (
  position INTEGER PRIMARY KEY, -- insertion order: newest first, and the list cursor
  call_id TEXT NOT NULL UNIQUE,
  session_id TEXT NOT NULL,
  tool_name TEXT NOT NULL,
  status TEXT NOT NULL,
  owner_id TEXT,
  ended_at INTEGER,
  record TEXT NOT NULL
);

CREATE TABLE event_resolutions (
  key TEXT PRIMARY KEY,
  call_id TEXT NOT NULL,
  outcome TEXT NOT NULL,
  at INTEGER NOT NULL
);

CREATE TABLE event_rows (
  position INTEGER PRIMARY KEY,
  call_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  last_seq INTEGER NOT NULL CHECK (last_seq >= seq AND last_seq - seq < 256),
  events TEXT NOT NULL,
  UNIQUE (call_id, seq)
);

CREATE TABLE instances (
  id TEXT PRIMARY KEY,
  host TEXT NOT NULL,
  pid INTEGER NOT NULL,
  started_at INTEGER NOT NULL,
  heartbeat_at INTEGER NOT NULL,
  lease_ms INTEGER NOT NULL,
  -- Each process's random boot id: a new process with a dead one's PID is not taken for it.
  boot TEXT NOT NULL DEFAULT '',
  -- The version of what the processes sharing the store say to each other (RuntimeInstance's
  -- protocol).
  protocol INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE notifications (
  id TEXT PRIMARY KEY,
  call_id TEXT NOT NULL,
  session_id TEXT NOT NULL,
  status TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  acknowledged_at INTEGER,
  notification TEXT NOT NULL,
  -- The instance that holds a notification a loop was given and has not acknowledged: none else
  -- takes it while that instance is registered.
  held_by TEXT
);

CREATE TABLE schedules (
  id TEXT PRIMARY KEY,
  session_id TEXT NOT NULL,
  enabled INTEGER NOT NULL,
  next_at INTEGER,
  schedule TEXT NOT NULL
);

CREATE TABLE steps (
  call_id TEXT NOT NULL,
  step_id TEXT NOT NULL,
  value TEXT NOT NULL,
  PRIMARY KEY (call_id, step_id)
) WITHOUT ROWID;

CREATE TABLE webhook_deliveries (
  position INTEGER PRIMARY KEY, -- write order: newest first
  id TEXT NOT NULL UNIQUE,
  call_id TEXT NOT NULL,
  session_id TEXT NOT NULL,
  status TEXT NOT NULL,
  next_at INTEGER NOT NULL,
  owner_id TEXT,
  lease_until INTEGER,
  delivery TEXT NOT NULL
);

CREATE INDEX calls_by_end ON calls (ended_at) WHERE ended_at IS NOT NULL;

CREATE INDEX calls_by_session ON calls (session_id, position);

CREATE INDEX calls_by_status ON calls (status, position);

CREATE INDEX calls_by_tool ON calls (tool_name, position);

CREATE INDEX calls_unfinished_by_owner ON calls (owner_id) WHERE ended_at IS NULL;

CREATE INDEX event_resolutions_by_call ON event_resolutions (call_id);

CREATE INDEX notifications_by_session ON notifications (session_id, status, created_at);

CREATE INDEX schedules_by_session ON schedules (session_id);

CREATE INDEX webhook_deliveries_by_call ON webhook_deliveries (call_id);

CREATE INDEX webhook_deliveries_by_session ON webhook_deliveries (session_id, position);

CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_at) WHERE status = 'pending';
