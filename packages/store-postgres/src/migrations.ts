/**
 * The schema, as numbered steps; `baton_schema` records the steps applied. Opening a store runs
 * the missing steps in one transaction under an advisory lock, so processes that start at once
 * migrate the database once. Only ever append a step.
 */
export const MIGRATIONS: readonly string[] = [
  `
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
  `,
  `
  -- workers claim the calls no one owns yet, oldest first
  CREATE INDEX calls_unclaimed ON calls (position) WHERE owner_id IS NULL AND status = 'queued';
  `,
  `
  -- each process's random boot id: a new process with a dead one's PID is not taken for it
  ALTER TABLE instances ADD COLUMN boot TEXT NOT NULL DEFAULT '';
  `,
  `
  -- lists by tool, newest first, without reading every call (the API's ?tool=)
  CREATE INDEX calls_by_tool ON calls (tool_name, position);
  `,
  `
  -- A batch of writes in one round trip: the statements a write used to send one by one (BEGIN,
  -- the records, the session locks, the events, the rest, NOTIFY, COMMIT), run in order in the
  -- statement's own transaction. Rows come as JSON arrays of the objects the runtime keeps.
  --
  -- Fencing. A record replaces the stored one only while the call is unfinished, by the instance
  -- that owns it (or by anyone while no one does), and never with an earlier attempt. The call's
  -- other rows are written only with an accepted record from the same batch or, without one,
  -- under the same rule; a call whose record this batch holds and was refused writes nothing.
  CREATE FUNCTION baton_write(
    p_calls jsonb, p_events jsonb, p_notifications jsonb, p_artifacts jsonb, p_steps jsonb,
    p_schedules jsonb, p_resolutions jsonb, p_writer text, p_channel text, p_notices text[]
  ) RETURNS void LANGUAGE plpgsql AS $$
  DECLARE
    accepted text[] := '{}';
    refused text[] := '{}';
  BEGIN
    IF p_calls IS NOT NULL THEN
      WITH written AS (
        INSERT INTO calls (call_id, session_id, tool_name, status, owner_id, ended_at, record)
        SELECT c->>'callId', c->>'sessionId', c->>'toolName', c->>'status', c->>'ownerId',
               (c->>'endedAt')::bigint, c
        FROM jsonb_array_elements(p_calls) AS c
        ON CONFLICT (call_id) DO UPDATE SET
          status = excluded.status, owner_id = excluded.owner_id, ended_at = excluded.ended_at,
          record = excluded.record
        WHERE (p_writer IS NULL OR ((calls.owner_id IS NULL OR calls.owner_id = p_writer)
                                    AND calls.ended_at IS NULL))
          AND (calls.record->>'attempt')::int <= (excluded.record->>'attempt')::int
        RETURNING call_id)
      SELECT coalesce(array_agg(call_id), '{}') INTO accepted FROM written;
      SELECT coalesce(array_agg(c->>'callId'), '{}') INTO refused
        FROM jsonb_array_elements(p_calls) AS c WHERE (c->>'callId') NOT IN (SELECT unnest(accepted));
    END IF;
    IF p_events IS NOT NULL THEN
      -- Writers of one session take turns (an advisory lock per session, taken in one order), so
      -- the positions of a session's events grow in the order they commit.
      PERFORM pg_advisory_xact_lock(key) FROM (
        SELECT DISTINCT hashtext('baton-session:' || (e->>'sessionId')) AS key
        FROM jsonb_array_elements(p_events) AS e ORDER BY key) AS keys;
      INSERT INTO events (call_id, seq, session_id, event)
      SELECT e->>'callId', (e->>'seq')::int, e->>'sessionId', e
      FROM jsonb_array_elements(p_events) WITH ORDINALITY AS t(e, n)
      WHERE (e->>'callId') IN (SELECT unnest(accepted))
         OR ((e->>'callId') NOT IN (SELECT unnest(refused)) AND baton_unheld(e->>'callId', p_writer)) ORDER BY n;
    END IF;
    IF p_notifications IS NOT NULL THEN
      INSERT INTO notifications (id, call_id, session_id, status, created_at, acknowledged_at, notification)
      SELECT x->>'id', x->>'callId', x->>'sessionId', x->>'status', (x->>'createdAt')::bigint,
             (x->>'acknowledgedAt')::bigint, x
      FROM jsonb_array_elements(p_notifications) AS x
      WHERE (x->>'callId') IN (SELECT unnest(accepted))
         OR ((x->>'callId') NOT IN (SELECT unnest(refused)) AND baton_unheld(x->>'callId', p_writer));
    END IF;
    IF p_artifacts IS NOT NULL THEN
      INSERT INTO artifacts (call_id, name, content)
      SELECT x->>'callId', x->>'name', x->>'content' FROM jsonb_array_elements(p_artifacts) AS x
      WHERE (x->>'callId') IN (SELECT unnest(accepted))
         OR ((x->>'callId') NOT IN (SELECT unnest(refused)) AND baton_unheld(x->>'callId', p_writer))
      ON CONFLICT (call_id, name) DO UPDATE SET content = excluded.content;
    END IF;
    IF p_steps IS NOT NULL THEN
      INSERT INTO steps (call_id, step_id, value)
      SELECT x->>'callId', x->>'stepId', coalesce(x->'value', 'null'::jsonb)
      FROM jsonb_array_elements(p_steps) AS x
      WHERE (x->>'callId') IN (SELECT unnest(accepted))
         OR ((x->>'callId') NOT IN (SELECT unnest(refused)) AND baton_unheld(x->>'callId', p_writer))
      ON CONFLICT (call_id, step_id) DO UPDATE SET value = excluded.value;
    END IF;
    IF p_schedules IS NOT NULL THEN
      INSERT INTO schedules (id, session_id, enabled, next_at, schedule)
      SELECT x->>'id', x->>'sessionId', (x->>'enabled')::boolean, (x->>'nextAt')::bigint, x
      FROM jsonb_array_elements(p_schedules) AS x
      ON CONFLICT (id) DO UPDATE SET
        enabled = excluded.enabled, next_at = excluded.next_at, schedule = excluded.schedule;
    END IF;
    IF p_resolutions IS NOT NULL THEN
      INSERT INTO event_resolutions (key, call_id, outcome, at)
      SELECT x->>'key', x->>'callId', x->'outcome', (x->>'at')::bigint
      FROM jsonb_array_elements(p_resolutions) AS x
      ON CONFLICT (key) DO NOTHING;
    END IF;
    -- Delivered when the transaction commits, and only then: a listener can read what it hears of.
    IF p_notices IS NOT NULL THEN
      PERFORM pg_notify(p_channel, notice) FROM unnest(p_notices) AS notice;
    END IF;
  END;
  $$;

  -- Whether p_writer may write rows of a call whose record the batch does not hold: the call is
  -- not someone else's and has not ended. The tests against the batch's accepted and refused
  -- calls are IN (SELECT unnest(...)), which PostgreSQL hashes once per statement; = ANY(array)
  -- scans the array for every row, and took a third of the database's time per call in batches
  -- of 1,000 calls.
  CREATE FUNCTION baton_unheld(p_call text, p_writer text)
  RETURNS boolean LANGUAGE sql STABLE AS $$
    SELECT NOT EXISTS (
      SELECT 1 FROM calls owner WHERE owner.call_id = p_call
        AND (owner.owner_id <> p_writer OR (p_writer IS NOT NULL AND owner.ended_at IS NOT NULL)))
  $$;
  `,
  `
  -- The two rows written for every call, its record and its events, as json rather than jsonb:
  -- PostgreSQL keeps json as the text it was given, where jsonb is converted to a binary form on
  -- the way in, and baton_write reads a row's columns with one json_to_record instead of one
  -- ->> each. Measured on a batch of 1,000 calls: its 3,000 events in 33 ms instead of 58, its
  -- records in 22 ms instead of 24. Nothing queries inside these columns but ->>, which json has.
  ALTER TABLE calls ALTER COLUMN record TYPE json USING record::json;
  ALTER TABLE events ALTER COLUMN event TYPE json USING event::json;
  DROP FUNCTION baton_write(jsonb, jsonb, jsonb, jsonb, jsonb, jsonb, jsonb, text, text, text[]);

  -- As in step 5, with records and events given as json, and the sessions of the events given
  -- apart (p_sessions): finding them in the events took 4 of the 60 ms of a batch of 1,000 calls.
  CREATE FUNCTION baton_write(
    p_calls json, p_events json, p_notifications jsonb, p_artifacts jsonb, p_steps jsonb,
    p_schedules jsonb, p_resolutions jsonb, p_writer text, p_channel text, p_notices text[],
    p_sessions text[]
  ) RETURNS void LANGUAGE plpgsql AS $$
  DECLARE
    accepted text[] := '{}';
    refused text[] := '{}';
  BEGIN
    IF p_calls IS NOT NULL THEN
      WITH written AS (
        INSERT INTO calls (call_id, session_id, tool_name, status, owner_id, ended_at, record)
        SELECT r."callId", r."sessionId", r."toolName", r.status, r."ownerId", r."endedAt", c
        FROM json_array_elements(p_calls) AS c,
             json_to_record(c) AS r("callId" text, "sessionId" text, "toolName" text, status text,
                                    "ownerId" text, "endedAt" bigint)
        ON CONFLICT (call_id) DO UPDATE SET
          status = excluded.status, owner_id = excluded.owner_id, ended_at = excluded.ended_at,
          record = excluded.record
        WHERE (p_writer IS NULL OR ((calls.owner_id IS NULL OR calls.owner_id = p_writer)
                                    AND calls.ended_at IS NULL))
          AND (calls.record->>'attempt')::int <= (excluded.record->>'attempt')::int
        RETURNING call_id)
      SELECT coalesce(array_agg(call_id), '{}') INTO accepted FROM written;
      SELECT coalesce(array_agg(c->>'callId'), '{}') INTO refused
        FROM json_array_elements(p_calls) AS c WHERE (c->>'callId') NOT IN (SELECT unnest(accepted));
    END IF;
    IF p_events IS NOT NULL THEN
      -- Writers of one session take turns (an advisory lock per session, taken in one order), so
      -- the positions of a session's events grow in the order they commit.
      PERFORM pg_advisory_xact_lock(key) FROM (
        SELECT DISTINCT hashtext('baton-session:' || session) AS key
        FROM unnest(p_sessions) AS session ORDER BY key) AS keys;
      INSERT INTO events (call_id, seq, session_id, event)
      SELECT r."callId", r.seq, r."sessionId", e
      FROM json_array_elements(p_events) WITH ORDINALITY AS t(e, n),
           json_to_record(e) AS r("callId" text, seq int, "sessionId" text)
      WHERE r."callId" IN (SELECT unnest(accepted))
         OR (r."callId" NOT IN (SELECT unnest(refused)) AND baton_unheld(r."callId", p_writer)) ORDER BY n;
    END IF;
    IF p_notifications IS NOT NULL THEN
      INSERT INTO notifications (id, call_id, session_id, status, created_at, acknowledged_at, notification)
      SELECT x->>'id', x->>'callId', x->>'sessionId', x->>'status', (x->>'createdAt')::bigint,
             (x->>'acknowledgedAt')::bigint, x
      FROM jsonb_array_elements(p_notifications) AS x
      WHERE (x->>'callId') IN (SELECT unnest(accepted))
         OR ((x->>'callId') NOT IN (SELECT unnest(refused)) AND baton_unheld(x->>'callId', p_writer));
    END IF;
    IF p_artifacts IS NOT NULL THEN
      INSERT INTO artifacts (call_id, name, content)
      SELECT x->>'callId', x->>'name', x->>'content' FROM jsonb_array_elements(p_artifacts) AS x
      WHERE (x->>'callId') IN (SELECT unnest(accepted))
         OR ((x->>'callId') NOT IN (SELECT unnest(refused)) AND baton_unheld(x->>'callId', p_writer))
      ON CONFLICT (call_id, name) DO UPDATE SET content = excluded.content;
    END IF;
    IF p_steps IS NOT NULL THEN
      INSERT INTO steps (call_id, step_id, value)
      SELECT x->>'callId', x->>'stepId', coalesce(x->'value', 'null'::jsonb)
      FROM jsonb_array_elements(p_steps) AS x
      WHERE (x->>'callId') IN (SELECT unnest(accepted))
         OR ((x->>'callId') NOT IN (SELECT unnest(refused)) AND baton_unheld(x->>'callId', p_writer))
      ON CONFLICT (call_id, step_id) DO UPDATE SET value = excluded.value;
    END IF;
    IF p_schedules IS NOT NULL THEN
      INSERT INTO schedules (id, session_id, enabled, next_at, schedule)
      SELECT x->>'id', x->>'sessionId', (x->>'enabled')::boolean, (x->>'nextAt')::bigint, x
      FROM jsonb_array_elements(p_schedules) AS x
      ON CONFLICT (id) DO UPDATE SET
        enabled = excluded.enabled, next_at = excluded.next_at, schedule = excluded.schedule;
    END IF;
    IF p_resolutions IS NOT NULL THEN
      INSERT INTO event_resolutions (key, call_id, outcome, at)
      SELECT x->>'key', x->>'callId', x->'outcome', (x->>'at')::bigint
      FROM jsonb_array_elements(p_resolutions) AS x
      ON CONFLICT (key) DO NOTHING;
    END IF;
    -- Delivered when the transaction commits, and only then: a listener can read what it hears of.
    IF p_notices IS NOT NULL THEN
      PERFORM pg_notify(p_channel, notice) FROM unnest(p_notices) AS notice;
    END IF;
  END;
  $$;
  `,
  `
  -- No query reads events by position alone: a session's through events_by_session (session_id,
  -- position), a call's through (call_id, seq). The index of the position key only cost every
  -- event one more entry, on the last page that every writer shares. (call_id, seq), unique and
  -- not null, identifies a row (for logical replication too) without rebuilding an index.
  ALTER TABLE events DROP CONSTRAINT events_pkey;
  ALTER TABLE events REPLICA IDENTITY USING INDEX events_call_id_seq_key;
  `,
  `
  -- A write whose notices go to several channels, one per topic (see notices.ts), so that a process
  -- is woken only by what concerns it. p_notices holds [channel, notice] entries, in order, the
  -- notices as JSON objects that go out as given (json keeps its text). baton_write stays for the
  -- processes of an earlier version that still run while this one starts.
  CREATE FUNCTION baton_write_notifying(
    p_calls json, p_events json, p_notifications jsonb, p_artifacts jsonb, p_steps jsonb,
    p_schedules jsonb, p_resolutions jsonb, p_writer text, p_sessions text[], p_notices json
  ) RETURNS void LANGUAGE plpgsql AS $$
  DECLARE
    entry json;
  BEGIN
    PERFORM baton_write(p_calls, p_events, p_notifications, p_artifacts, p_steps, p_schedules,
                        p_resolutions, p_writer, NULL, NULL, p_sessions);
    -- Delivered when the transaction commits, and only then: a listener can read what it hears of.
    FOR entry IN SELECT e FROM json_array_elements(p_notices) AS e LOOP
      PERFORM pg_notify(entry->>0, (entry->1)::text);
    END LOOP;
  END;
  $$;
  `,
  `
  -- A call's events of one write in one row (event_rows), where they were a row each: a batch of
  -- 250 one-tick calls is 250 rows and 500 index entries instead of 750 and 1,500, and a third
  -- fewer bytes. And the records are read once, not twice. One process with 1,000 calls in
  -- flight: PostgreSQL's CPU per call 70-85 µs -> 57-65, calls/s up 15-25% (bench/RESULTS.md).
  --
  -- A row's events have consecutive seqs, seq to last_seq, at most 256 of them; its position is
  -- its first event's, and the n-th is at position + n - 1: rows take positions 256 apart, so
  -- 2^45 rows fit below 2^53, the largest position a JavaScript number holds exactly. A session's
  -- events are in the order of its rows, a write's rows in the order given (each call's events
  -- together: a session's events of one write are grouped by call). The events written before
  -- this step keep their positions, all below the first row's.
  CREATE SEQUENCE event_rows_position INCREMENT BY 256;
  CREATE TABLE event_rows (
    position BIGINT NOT NULL DEFAULT nextval('event_rows_position'),
    call_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    last_seq INTEGER NOT NULL CHECK (last_seq >= seq AND last_seq - seq < 256),
    session_id TEXT NOT NULL,
    events JSON NOT NULL,
    UNIQUE (call_id, seq)
  );
  ALTER TABLE event_rows REPLICA IDENTITY USING INDEX event_rows_call_id_seq_key;
  CREATE INDEX event_rows_by_session ON event_rows (session_id, position);
  INSERT INTO event_rows (position, call_id, seq, last_seq, session_id, events)
    SELECT position, call_id, seq, seq, session_id, json_build_array(event) FROM events;
  SELECT setval('event_rows_position', (SELECT coalesce(max(position), 0) + 1 FROM events), false);
  DROP TABLE events;
  -- The events one a row, as processes of an earlier version read them while this one starts,
  -- and delete them (their retention sweep removes a call's events by call_id).
  CREATE VIEW events AS
    SELECT r.position + e.n - 1 AS position, r.call_id, r.seq + e.n::int - 1 AS seq,
           r.session_id, e.event
    FROM event_rows AS r, json_array_elements(r.events) WITH ORDINALITY AS e(event, n);
  CREATE FUNCTION baton_delete_event() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    DELETE FROM event_rows WHERE call_id = OLD.call_id AND seq <= OLD.seq AND last_seq >= OLD.seq;
    RETURN OLD;
  END;
  $$;
  CREATE TRIGGER events_delete INSTEAD OF DELETE ON events
    FOR EACH ROW EXECUTE FUNCTION baton_delete_event();

  -- As baton_write_notifying, with the events as rows: p_event_rows holds one object per row,
  -- { callId, sessionId, seq, lastSeq, events }, in the order of their positions.
  CREATE FUNCTION baton_write_rows(
    p_calls json, p_event_rows json, p_notifications jsonb, p_artifacts jsonb, p_steps jsonb,
    p_schedules jsonb, p_resolutions jsonb, p_writer text, p_sessions text[], p_notices json
  ) RETURNS void LANGUAGE plpgsql AS $$
  DECLARE
    accepted text[] := '{}';
    refused text[] := '{}';
    later_calls text[];
    later_seqs int[];
    later_last_seqs int[];
    clash_call text;
    clash_seq int;
    entry json;
  BEGIN
    IF p_calls IS NOT NULL THEN
      -- The records read once: which were accepted and which refused come from the same rows.
      WITH input AS MATERIALIZED (
        SELECT r."callId", r."sessionId", r."toolName", r.status, r."ownerId", r."endedAt", c
        FROM json_array_elements(p_calls) AS c,
             json_to_record(c) AS r("callId" text, "sessionId" text, "toolName" text, status text,
                                    "ownerId" text, "endedAt" bigint)),
      written AS (
        INSERT INTO calls (call_id, session_id, tool_name, status, owner_id, ended_at, record)
        SELECT * FROM input
        ON CONFLICT (call_id) DO UPDATE SET
          status = excluded.status, owner_id = excluded.owner_id, ended_at = excluded.ended_at,
          record = excluded.record
        WHERE (p_writer IS NULL OR ((calls.owner_id IS NULL OR calls.owner_id = p_writer)
                                    AND calls.ended_at IS NULL))
          AND (calls.record->>'attempt')::int <= (excluded.record->>'attempt')::int
        RETURNING call_id)
      SELECT coalesce(array_agg(i."callId") FILTER (WHERE w.call_id IS NOT NULL), '{}'),
             coalesce(array_agg(i."callId") FILTER (WHERE w.call_id IS NULL), '{}')
        INTO accepted, refused
        FROM input AS i LEFT JOIN written AS w ON w.call_id = i."callId";
    END IF;
    IF p_event_rows IS NOT NULL THEN
      -- Writers of one session take turns (an advisory lock per session, taken in one order), so
      -- the positions of a session's rows grow in the order they commit.
      PERFORM pg_advisory_xact_lock(key) FROM (
        SELECT DISTINCT hashtext('baton-session:' || session) AS key
        FROM unnest(p_sessions) AS session ORDER BY key) AS keys;
      WITH inserted AS (
        INSERT INTO event_rows (call_id, seq, last_seq, session_id, events)
        SELECT r."callId", r.seq, r."lastSeq", r."sessionId", r.events
        FROM json_array_elements(p_event_rows) WITH ORDINALITY AS t(x, n),
             json_to_record(x) AS r("callId" text, "sessionId" text, seq int, "lastSeq" int, events json)
        WHERE r."callId" IN (SELECT unnest(accepted))
           OR (r."callId" NOT IN (SELECT unnest(refused)) AND baton_unheld(r."callId", p_writer))
        ORDER BY n
        RETURNING call_id, seq, last_seq)
      SELECT array_agg(call_id), array_agg(seq), array_agg(last_seq)
        INTO later_calls, later_seqs, later_last_seqs FROM inserted WHERE seq > 1;
      -- (call_id, seq) refuses a row that repeats another's first event; a row that does not start
      -- its call's numbering must not overlap another row at all. (Numbering starts at 1.)
      IF later_calls IS NOT NULL THEN
        -- LATERAL ... LIMIT 1: one probe of (call_id, seq) per row, never a scan of the table.
        SELECT n.call_id, n.seq INTO clash_call, clash_seq
          FROM unnest(later_calls, later_seqs, later_last_seqs) AS n(call_id, seq, last_seq)
          CROSS JOIN LATERAL (
            SELECT 1 FROM event_rows AS p
            WHERE p.call_id = n.call_id AND p.seq <= n.last_seq AND p.last_seq >= n.seq
              AND p.seq <> n.seq
            LIMIT 1) AS clash
          LIMIT 1;
        IF FOUND THEN
          RAISE EXCEPTION 'call % already has an event among those from %', clash_call, clash_seq
            USING ERRCODE = 'unique_violation';
        END IF;
      END IF;
    END IF;
    IF p_notifications IS NOT NULL THEN
      INSERT INTO notifications (id, call_id, session_id, status, created_at, acknowledged_at, notification)
      SELECT x->>'id', x->>'callId', x->>'sessionId', x->>'status', (x->>'createdAt')::bigint,
             (x->>'acknowledgedAt')::bigint, x
      FROM jsonb_array_elements(p_notifications) AS x
      WHERE (x->>'callId') IN (SELECT unnest(accepted))
         OR ((x->>'callId') NOT IN (SELECT unnest(refused)) AND baton_unheld(x->>'callId', p_writer));
    END IF;
    IF p_artifacts IS NOT NULL THEN
      INSERT INTO artifacts (call_id, name, content)
      SELECT x->>'callId', x->>'name', x->>'content' FROM jsonb_array_elements(p_artifacts) AS x
      WHERE (x->>'callId') IN (SELECT unnest(accepted))
         OR ((x->>'callId') NOT IN (SELECT unnest(refused)) AND baton_unheld(x->>'callId', p_writer))
      ON CONFLICT (call_id, name) DO UPDATE SET content = excluded.content;
    END IF;
    IF p_steps IS NOT NULL THEN
      INSERT INTO steps (call_id, step_id, value)
      SELECT x->>'callId', x->>'stepId', coalesce(x->'value', 'null'::jsonb)
      FROM jsonb_array_elements(p_steps) AS x
      WHERE (x->>'callId') IN (SELECT unnest(accepted))
         OR ((x->>'callId') NOT IN (SELECT unnest(refused)) AND baton_unheld(x->>'callId', p_writer))
      ON CONFLICT (call_id, step_id) DO UPDATE SET value = excluded.value;
    END IF;
    IF p_schedules IS NOT NULL THEN
      INSERT INTO schedules (id, session_id, enabled, next_at, schedule)
      SELECT x->>'id', x->>'sessionId', (x->>'enabled')::boolean, (x->>'nextAt')::bigint, x
      FROM jsonb_array_elements(p_schedules) AS x
      ON CONFLICT (id) DO UPDATE SET
        enabled = excluded.enabled, next_at = excluded.next_at, schedule = excluded.schedule;
    END IF;
    IF p_resolutions IS NOT NULL THEN
      INSERT INTO event_resolutions (key, call_id, outcome, at)
      SELECT x->>'key', x->>'callId', x->'outcome', (x->>'at')::bigint
      FROM jsonb_array_elements(p_resolutions) AS x
      ON CONFLICT (key) DO NOTHING;
    END IF;
    -- Delivered when the transaction commits, and only then: a listener can read what it hears of.
    FOR entry IN SELECT e FROM json_array_elements(p_notices) AS e LOOP
      PERFORM pg_notify(entry->>0, (entry->1)::text);
    END LOOP;
  END;
  $$;

  -- baton_write of step 6, as processes of an earlier version call it (baton_write_notifying
  -- through it): each event in a row of its own.
  CREATE OR REPLACE FUNCTION baton_write(
    p_calls json, p_events json, p_notifications jsonb, p_artifacts jsonb, p_steps jsonb,
    p_schedules jsonb, p_resolutions jsonb, p_writer text, p_channel text, p_notices text[],
    p_sessions text[]
  ) RETURNS void LANGUAGE plpgsql AS $$
  BEGIN
    PERFORM baton_write_rows(
      p_calls,
      (SELECT json_agg(json_build_object(
                'callId', e->>'callId', 'sessionId', e->>'sessionId', 'seq', (e->>'seq')::int,
                'lastSeq', (e->>'seq')::int, 'events', json_build_array(e)) ORDER BY n)
       FROM json_array_elements(p_events) WITH ORDINALITY AS t(e, n)),
      p_notifications, p_artifacts, p_steps, p_schedules, p_resolutions, p_writer, p_sessions, '[]');
    IF p_notices IS NOT NULL THEN
      PERFORM pg_notify(p_channel, notice) FROM unnest(p_notices) AS notice;
    END IF;
  END;
  $$;
  `,
  `
  -- The requests sent for calls (cancel, approve, reject), kept until their call is removed. A
  -- request is a NOTIFY too, and a process whose LISTEN was down when it was sent, or that took the
  -- call over from a process that died, reads what it did not hear here.
  CREATE TABLE requests (
    position BIGSERIAL PRIMARY KEY,
    call_id TEXT NOT NULL,
    request JSONB NOT NULL
  );
  CREATE INDEX requests_by_call ON requests (call_id, position);
  `,
  `
  -- As baton_write_rows, with the records and the event rows given as columns: an array of each
  -- column, and the JSON of each row on a line of its own (JSON.stringify never writes a newline).
  -- A write was parsing each row's JSON four times: the parameter's json, json_array_elements,
  -- json_to_record, and the events again as a json field; a third of PostgreSQL's CPU in the
  -- bench. Now each row's JSON is read once, as it becomes json. Batches of 100 one-tick calls:
  -- the backend's CPU per call 43-45 µs -> 35-37 (bench/RESULTS.md). baton_write_rows stays for
  -- the processes of an earlier version that still run while this one starts.
  CREATE FUNCTION baton_write_lines(
    p_call_ids text[], p_call_sessions text[], p_call_tools text[], p_call_statuses text[],
    p_call_owners text[], p_call_ended bigint[], p_call_records text,
    p_row_calls text[], p_row_sessions text[], p_row_seqs int[], p_row_last_seqs int[],
    p_row_events text,
    p_notifications jsonb, p_artifacts jsonb, p_steps jsonb, p_schedules jsonb, p_resolutions jsonb,
    p_writer text, p_sessions text[], p_notices json
  ) RETURNS void LANGUAGE plpgsql AS $$
  DECLARE
    accepted text[] := '{}';
    refused text[] := '{}';
    later_calls text[];
    later_seqs int[];
    later_last_seqs int[];
    clash_call text;
    clash_seq int;
    entry json;
  BEGIN
    IF p_call_ids IS NOT NULL THEN
      WITH input AS MATERIALIZED (
        SELECT * FROM unnest(p_call_ids, p_call_sessions, p_call_tools, p_call_statuses, p_call_owners,
                             p_call_ended, string_to_array(p_call_records, E'\n')::json[])
          AS r(call_id, session_id, tool_name, status, owner_id, ended_at, record)),
      written AS (
        INSERT INTO calls (call_id, session_id, tool_name, status, owner_id, ended_at, record)
        SELECT * FROM input
        ON CONFLICT (call_id) DO UPDATE SET
          status = excluded.status, owner_id = excluded.owner_id, ended_at = excluded.ended_at,
          record = excluded.record
        WHERE (p_writer IS NULL OR ((calls.owner_id IS NULL OR calls.owner_id = p_writer)
                                    AND calls.ended_at IS NULL))
          AND (calls.record->>'attempt')::int <= (excluded.record->>'attempt')::int
        RETURNING call_id)
      SELECT coalesce(array_agg(i.call_id) FILTER (WHERE w.call_id IS NOT NULL), '{}'),
             coalesce(array_agg(i.call_id) FILTER (WHERE w.call_id IS NULL), '{}')
        INTO accepted, refused
        FROM input AS i LEFT JOIN written AS w ON w.call_id = i.call_id;
    END IF;
    IF p_row_calls IS NOT NULL THEN
      PERFORM pg_advisory_xact_lock(key) FROM (
        SELECT DISTINCT hashtext('baton-session:' || session) AS key
        FROM unnest(p_sessions) AS session ORDER BY key) AS keys;
      WITH inserted AS (
        INSERT INTO event_rows (call_id, seq, last_seq, session_id, events)
        SELECT r.call_id, r.seq, r.last_seq, r.session_id, r.events
        FROM unnest(p_row_calls, p_row_seqs, p_row_last_seqs, p_row_sessions,
                    string_to_array(p_row_events, E'\n')::json[]) WITH ORDINALITY
          AS r(call_id, seq, last_seq, session_id, events, n)
        WHERE r.call_id IN (SELECT unnest(accepted))
           OR (r.call_id NOT IN (SELECT unnest(refused)) AND baton_unheld(r.call_id, p_writer))
        ORDER BY n
        RETURNING call_id, seq, last_seq)
      SELECT array_agg(call_id), array_agg(seq), array_agg(last_seq)
        INTO later_calls, later_seqs, later_last_seqs FROM inserted WHERE seq > 1;
      IF later_calls IS NOT NULL THEN
        SELECT n.call_id, n.seq INTO clash_call, clash_seq
          FROM unnest(later_calls, later_seqs, later_last_seqs) AS n(call_id, seq, last_seq)
          CROSS JOIN LATERAL (
            SELECT 1 FROM event_rows AS p
            WHERE p.call_id = n.call_id AND p.seq <= n.last_seq AND p.last_seq >= n.seq
              AND p.seq <> n.seq
            LIMIT 1) AS clash
          LIMIT 1;
        IF FOUND THEN
          RAISE EXCEPTION 'call % already has an event among those from %', clash_call, clash_seq
            USING ERRCODE = 'unique_violation';
        END IF;
      END IF;
    END IF;
    IF p_notifications IS NOT NULL THEN
      INSERT INTO notifications (id, call_id, session_id, status, created_at, acknowledged_at, notification)
      SELECT x->>'id', x->>'callId', x->>'sessionId', x->>'status', (x->>'createdAt')::bigint,
             (x->>'acknowledgedAt')::bigint, x
      FROM jsonb_array_elements(p_notifications) AS x
      WHERE (x->>'callId') IN (SELECT unnest(accepted))
         OR ((x->>'callId') NOT IN (SELECT unnest(refused)) AND baton_unheld(x->>'callId', p_writer));
    END IF;
    IF p_artifacts IS NOT NULL THEN
      INSERT INTO artifacts (call_id, name, content)
      SELECT x->>'callId', x->>'name', x->>'content' FROM jsonb_array_elements(p_artifacts) AS x
      WHERE (x->>'callId') IN (SELECT unnest(accepted))
         OR ((x->>'callId') NOT IN (SELECT unnest(refused)) AND baton_unheld(x->>'callId', p_writer))
      ON CONFLICT (call_id, name) DO UPDATE SET content = excluded.content;
    END IF;
    IF p_steps IS NOT NULL THEN
      INSERT INTO steps (call_id, step_id, value)
      SELECT x->>'callId', x->>'stepId', coalesce(x->'value', 'null'::jsonb)
      FROM jsonb_array_elements(p_steps) AS x
      WHERE (x->>'callId') IN (SELECT unnest(accepted))
         OR ((x->>'callId') NOT IN (SELECT unnest(refused)) AND baton_unheld(x->>'callId', p_writer))
      ON CONFLICT (call_id, step_id) DO UPDATE SET value = excluded.value;
    END IF;
    IF p_schedules IS NOT NULL THEN
      INSERT INTO schedules (id, session_id, enabled, next_at, schedule)
      SELECT x->>'id', x->>'sessionId', (x->>'enabled')::boolean, (x->>'nextAt')::bigint, x
      FROM jsonb_array_elements(p_schedules) AS x
      ON CONFLICT (id) DO UPDATE SET
        enabled = excluded.enabled, next_at = excluded.next_at, schedule = excluded.schedule;
    END IF;
    IF p_resolutions IS NOT NULL THEN
      INSERT INTO event_resolutions (key, call_id, outcome, at)
      SELECT x->>'key', x->>'callId', x->'outcome', (x->>'at')::bigint
      FROM jsonb_array_elements(p_resolutions) AS x
      ON CONFLICT (key) DO NOTHING;
    END IF;
    FOR entry IN SELECT e FROM json_array_elements(p_notices) AS e LOOP
      PERFORM pg_notify(entry->>0, (entry->1)::text);
    END LOOP;
  END;
  $$;
  `,
  `
  -- Webhook deliveries (Standard Webhooks): each notification on its way to a webhook, the process
  -- that holds it for an attempt (owner_id) and until when (lease_until).
  CREATE TABLE webhook_deliveries (
    position BIGSERIAL PRIMARY KEY, -- write order: newest first
    id TEXT NOT NULL UNIQUE,
    call_id TEXT NOT NULL,
    session_id TEXT NOT NULL,
    status TEXT NOT NULL,
    next_at BIGINT NOT NULL,
    owner_id TEXT,
    lease_until BIGINT,
    delivery JSONB NOT NULL
  );
  CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_at) WHERE status = 'pending';
  CREATE INDEX webhook_deliveries_by_session ON webhook_deliveries (session_id, position);
  CREATE INDEX webhook_deliveries_by_call ON webhook_deliveries (call_id);
  `,
];
