CREATE TABLE calls (
  position BIGSERIAL PRIMARY KEY, -- insertion order: newest first, and the list cursor
  call_id TEXT NOT NULL UNIQUE,
  session_id TEXT NOT NULL,
  tool_name TEXT NOT NULL,
  status TEXT NOT NULL,
  owner_id TEXT,
  ended_at BIGINT,
  record JSONB NOT NULL
);
CREATE INDEX calls_by_session ON calls (session_id, position);
CREATE INDEX calls_by_status ON calls (status, position);
CREATE INDEX calls_unfinished_by_owner ON calls (owner_id) WHERE ended_at IS NULL;
CREATE INDEX calls_by_end ON calls (ended_at) WHERE ended_at IS NOT NULL;

CREATE TABLE events (
  position BIGSERIAL PRIMARY KEY, -- write order within a session (writers of a session take turns)
  call_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  session_id TEXT NOT NULL,
  event JSONB NOT NULL,
  UNIQUE (call_id, seq)
);
CREATE INDEX events_by_session ON events (session_id, position);

CREATE TABLE notifications (
  position BIGSERIAL PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  call_id TEXT NOT NULL,
  session_id TEXT NOT NULL,
  status TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  acknowledged_at BIGINT,
  notification JSONB NOT NULL
);
CREATE INDEX notifications_by_session ON notifications (session_id, status, created_at);

CREATE TABLE artifacts (
  call_id TEXT NOT NULL,
  name TEXT NOT NULL,
  content TEXT NOT NULL,
  PRIMARY KEY (call_id, name)
);

CREATE TABLE steps (
  call_id TEXT NOT NULL,
  step_id TEXT NOT NULL,
  value JSONB NOT NULL,
  PRIMARY KEY (call_id, step_id)
);

CREATE TABLE event_resolutions (
  key TEXT PRIMARY KEY,
  call_id TEXT NOT NULL,
  outcome JSONB NOT NULL,
  at BIGINT NOT NULL
);
CREATE INDEX event_resolutions_by_call ON event_resolutions (call_id);

CREATE TABLE schedules (
  position BIGSERIAL PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  session_id TEXT NOT NULL,
  enabled BOOLEAN NOT NULL,
  next_at BIGINT,
  schedule JSONB NOT NULL
);
CREATE INDEX schedules_by_session ON schedules (session_id);

CREATE TABLE instances (
  id TEXT PRIMARY KEY,
  host TEXT NOT NULL,
  pid INTEGER NOT NULL,
  started_at BIGINT NOT NULL,
  heartbeat_at BIGINT NOT NULL,
  lease_ms BIGINT NOT NULL
);
