/**
 * The schema, as numbered steps. A database is at step `PRAGMA user_version`; opening it runs the
 * steps after that, in one transaction that holds the write lock, so processes that open the same
 * file at once migrate it once. Only ever append a step.
 */
export const MIGRATIONS: readonly string[] = [
  `
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
  CREATE INDEX calls_by_session ON calls (session_id, position);
  CREATE INDEX calls_by_status ON calls (status, position);
  CREATE INDEX calls_unfinished_by_owner ON calls (owner_id) WHERE ended_at IS NULL;
  CREATE INDEX calls_by_end ON calls (ended_at) WHERE ended_at IS NOT NULL;

  CREATE TABLE events (
    call_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    event TEXT NOT NULL,
    PRIMARY KEY (call_id, seq)
  ) WITHOUT ROWID;

  CREATE TABLE notifications (
    id TEXT PRIMARY KEY,
    call_id TEXT NOT NULL,
    session_id TEXT NOT NULL,
    status TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    acknowledged_at INTEGER,
    notification TEXT NOT NULL
  );
  CREATE INDEX notifications_by_session ON notifications (session_id, status, created_at);

  CREATE TABLE artifacts (
    call_id TEXT NOT NULL,
    name TEXT NOT NULL,
    content TEXT NOT NULL,
    PRIMARY KEY (call_id, name)
  ) WITHOUT ROWID;

  CREATE TABLE instances (
    id TEXT PRIMARY KEY,
    host TEXT NOT NULL,
    pid INTEGER NOT NULL,
    started_at INTEGER NOT NULL,
    heartbeat_at INTEGER NOT NULL,
    lease_ms INTEGER NOT NULL
  );
  `,
  `
  CREATE TABLE steps (
    call_id TEXT NOT NULL,
    step_id TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (call_id, step_id)
  ) WITHOUT ROWID;
  `,
  `
  CREATE TABLE event_resolutions (
    key TEXT PRIMARY KEY,
    call_id TEXT NOT NULL,
    outcome TEXT NOT NULL,
    at INTEGER NOT NULL
  );
  CREATE INDEX event_resolutions_by_call ON event_resolutions (call_id);
  `,
  `
  CREATE TABLE schedules (
    id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL,
    enabled INTEGER NOT NULL,
    next_at INTEGER,
    schedule TEXT NOT NULL
  );
  CREATE INDEX schedules_by_session ON schedules (session_id);
  `,
  `
  -- events get a position in write order, which a session's event stream resumes from
  CREATE TABLE events_in_order (
    position INTEGER PRIMARY KEY,
    call_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    event TEXT NOT NULL,
    UNIQUE (call_id, seq)
  );
  INSERT INTO events_in_order (call_id, seq, event)
    SELECT call_id, seq, event FROM events ORDER BY json_extract(event, '$.at'), call_id, seq;
  DROP TABLE events;
  ALTER TABLE events_in_order RENAME TO events;
  `,
  `
  -- each process's random boot id: a new process with a dead one's PID is not taken for it
  ALTER TABLE instances ADD COLUMN boot TEXT NOT NULL DEFAULT '';
  `,
  `
  -- lists by tool, newest first, without reading every call (the API's ?tool=)
  CREATE INDEX calls_by_tool ON calls (tool_name, position);
  `,
];
