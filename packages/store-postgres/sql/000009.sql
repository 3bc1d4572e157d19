-- A call's events of one write in one row (event_rows), where they were a row each: a batch of
-- 250 one-tick calls is 250 rows and 500 index entries instead of 750 and 1,500, and a third
-- fewer bytes. And the records are read once, not twice: PostgreSQL spends less CPU per call
-- (bench/RESULTS.md, row 7).
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
