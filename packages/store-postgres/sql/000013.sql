-- The split path (client and worker processes) cheaper for PostgreSQL. A call's row was
-- rewritten three times (queued, claimed, ended), and each new version went into all eight
-- indexes, four of them on the columns a claim or an end changes (status, owner_id, ended_at).
-- Now no index holds a column that changes after the insert, so a claim and an end are heap-only
-- updates (HOT) on a page with room for them (fillfactor): no index entry at all.
--
-- What those indexes found is kept in two small tables of positions, each row as long as the
-- state it marks: call_queue, the calls that wait for a worker (queued, no owner, no approval
-- pending), which a claim takes from and deletes; call_owners, the unfinished calls a process
-- holds, which the recovery of a process gone reads. This version's statements keep them as they
-- write (baton_keep_calls, baton_claim); a trigger keeps them for any other writer of the calls (a
-- process of an earlier version during a rolling start, a person), and stays out of the way of
-- this version's statements, which say so for their transaction (baton.keeps_calls): a row
-- trigger that ran for each of their rows cost more than the rest of a claim.
-- Retention finds ended calls by creation (created_at: a call ended before a time was created
-- before it); a list by status alone reads the calls newest first. The attempt, which a write
-- compares, is a column: it was read out of both records' JSON.
ALTER TABLE calls ADD COLUMN created_at BIGINT, ADD COLUMN attempt INTEGER;
UPDATE calls SET created_at = (record->>'createdAt')::bigint, attempt = (record->>'attempt')::int;
ALTER TABLE calls ALTER COLUMN created_at SET NOT NULL, ALTER COLUMN attempt SET NOT NULL;
-- Room on each page for a row's next versions.
ALTER TABLE calls SET (fillfactor = 30);

CREATE TABLE call_queue (position BIGINT PRIMARY KEY);
CREATE TABLE call_owners (position BIGINT PRIMARY KEY, owner_id TEXT NOT NULL);

-- A call a worker may claim. The JSON is read only for a queued call whose record names a
-- pending state (strpos is a tenth of the parse).
CREATE FUNCTION baton_claimable(p_status text, p_owner text, p_record json) RETURNS boolean
LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE WHEN p_status <> 'queued' OR p_owner IS NOT NULL THEN false
              WHEN strpos(p_record::text, 'pending') = 0 THEN true
              ELSE (p_record->>'approval') IS DISTINCT FROM 'pending' END
$$;

-- The process that holds an unfinished call, or null.
CREATE FUNCTION baton_holder(p_status text, p_owner text, p_ended bigint) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE WHEN p_ended IS NULL
                AND p_status NOT IN ('succeeded', 'failed', 'cancelled', 'timed_out')
              THEN p_owner END
$$;

INSERT INTO call_queue (position)
  SELECT position FROM calls WHERE baton_claimable(status, owner_id, record);
INSERT INTO call_owners (position, owner_id)
  SELECT position, baton_holder(status, owner_id, ended_at) FROM calls
  WHERE baton_holder(status, owner_id, ended_at) IS NOT NULL;

DROP INDEX calls_unclaimed;
DROP INDEX calls_unfinished_by_owner;
DROP INDEX calls_by_status;
DROP INDEX calls_by_end;
CREATE INDEX calls_by_creation ON calls (created_at);

-- The queue and the owners after calls were written: `written` positions, those `added` (new rows),
-- which are `claimable` now and who holds each (null: no one). A queue row that a claim holds is
-- skipped (SKIP LOCKED), never waited for: that claim deletes it, and takes nothing from a call no
-- longer claimable.
CREATE FUNCTION baton_keep_calls(p_written bigint[], p_added boolean[], p_claimable boolean[],
                                 p_holders text[]) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  unqueued bigint[];
  queued bigint[];
  held bigint[];
  holders text[];
  unheld bigint[];
BEGIN
  SELECT array_agg(position) FILTER (WHERE NOT added AND NOT claimable),
         array_agg(position) FILTER (WHERE claimable),
         array_agg(position) FILTER (WHERE holder IS NOT NULL),
         array_agg(holder) FILTER (WHERE holder IS NOT NULL),
         array_agg(position) FILTER (WHERE NOT added AND holder IS NULL)
    INTO unqueued, queued, held, holders, unheld
    FROM unnest(p_written, p_added, p_claimable, p_holders) AS w(position, added, claimable, holder);
  IF unqueued IS NOT NULL THEN
    DELETE FROM call_queue WHERE position = ANY(ARRAY(
      SELECT position FROM call_queue WHERE position = ANY(unqueued) FOR UPDATE SKIP LOCKED));
  END IF;
  IF queued IS NOT NULL THEN
    INSERT INTO call_queue (position) SELECT unnest(queued) ON CONFLICT (position) DO NOTHING;
  END IF;
  IF unheld IS NOT NULL THEN
    DELETE FROM call_owners WHERE position = ANY(unheld);
  END IF;
  IF held IS NOT NULL THEN
    INSERT INTO call_owners (position, owner_id) SELECT * FROM unnest(held, holders)
    ON CONFLICT (position) DO UPDATE SET owner_id = excluded.owner_id
      WHERE call_owners.owner_id <> excluded.owner_id;
  END IF;
END;
$$;

-- The same for a row written by a statement that does not keep them itself.
CREATE FUNCTION baton_call_written() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    DELETE FROM call_queue WHERE position = OLD.position;
    DELETE FROM call_owners WHERE position = OLD.position;
  ELSE
    PERFORM baton_keep_calls(ARRAY[NEW.position], ARRAY[TG_OP = 'INSERT'],
                             ARRAY[baton_claimable(NEW.status, NEW.owner_id, NEW.record)],
                             ARRAY[baton_holder(NEW.status, NEW.owner_id, NEW.ended_at)]);
  END IF;
  RETURN NULL;
END;
$$;

CREATE TRIGGER calls_written AFTER INSERT OR UPDATE OR DELETE ON calls FOR EACH ROW
  WHEN (current_setting('baton.keeps_calls', true) IS DISTINCT FROM 'on')
  EXECUTE FUNCTION baton_call_written();

-- A worker's claim: the oldest calls of the queue (or the call named, whether a worker may claim
-- it or not: one that waits for its approval), taken from it and held by p_owner, with the number
-- of their last event and the requests sent for them.
CREATE FUNCTION baton_claim(p_owner text, p_limit int, p_call_id text)
RETURNS TABLE (claimed_position bigint, claimed_record json, claimed_owner text,
               claimed_last_seq int, claimed_requests json)
LANGUAGE plpgsql AS $$
DECLARE
  taken bigint[];
BEGIN
  PERFORM set_config('baton.keeps_calls', 'on', true);
  IF p_call_id IS NULL THEN
    -- = ANY(ARRAY(...)): looked up by position whatever the planner thinks of the tables' sizes.
    WITH picked AS MATERIALIZED (
      SELECT q.position FROM call_queue AS q ORDER BY q.position LIMIT p_limit FOR UPDATE SKIP LOCKED),
    unqueued AS (DELETE FROM call_queue AS q WHERE q.position = ANY(ARRAY(SELECT position FROM picked))),
    claimed AS (
      UPDATE calls AS c SET owner_id = p_owner
      WHERE c.position = ANY(ARRAY(SELECT position FROM picked))
        AND baton_claimable(c.status, c.owner_id, c.record)
      RETURNING c.position)
    SELECT array_agg(position) INTO taken FROM claimed;
  ELSE
    WITH claimed AS (
      UPDATE calls AS c SET owner_id = p_owner
      WHERE c.position = ANY(ARRAY(
        SELECT x.position FROM calls AS x
        WHERE x.call_id = p_call_id AND x.owner_id IS NULL AND x.status = 'queued'
        FOR UPDATE SKIP LOCKED))
      RETURNING c.position)
    SELECT array_agg(position) INTO taken FROM claimed;
    IF taken IS NOT NULL THEN
      DELETE FROM call_queue WHERE position = ANY(ARRAY(
        SELECT q.position FROM call_queue AS q WHERE q.position = ANY(taken) FOR UPDATE SKIP LOCKED));
    END IF;
  END IF;
  IF taken IS NULL THEN
    PERFORM set_config('baton.keeps_calls', 'off', true);
    RETURN;
  END IF;
  INSERT INTO call_owners (position, owner_id) SELECT unnest(taken), p_owner
  ON CONFLICT (position) DO UPDATE SET owner_id = excluded.owner_id;
  RETURN QUERY
    SELECT c.position, c.record, c.owner_id,
           coalesce((SELECT r.last_seq FROM event_rows AS r WHERE r.call_id = c.call_id
                     ORDER BY r.seq DESC LIMIT 1), 0),
           (SELECT json_agg(q.request ORDER BY q.position) FROM requests AS q
            WHERE q.call_id = c.call_id)
    FROM calls AS c WHERE c.position = ANY(taken) ORDER BY c.position;
  PERFORM set_config('baton.keeps_calls', 'off', true);
END;
$$;

-- The recovery of processes gone: their unfinished calls, held by p_owner from now.
CREATE FUNCTION baton_claim_orphans(p_owner text, p_gone text[])
RETURNS TABLE (claimed_position bigint, claimed_record json, claimed_owner text)
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM set_config('baton.keeps_calls', 'on', true);
  RETURN QUERY
    WITH claimed AS (
      UPDATE calls AS c SET owner_id = p_owner
      WHERE c.position = ANY(ARRAY(SELECT o.position FROM call_owners AS o WHERE o.owner_id = ANY(p_gone)))
        AND c.owner_id = ANY(p_gone) AND baton_holder(c.status, c.owner_id, c.ended_at) IS NOT NULL
      RETURNING c.position, c.record, c.owner_id),
    held AS (
      UPDATE call_owners AS o SET owner_id = p_owner FROM claimed AS c WHERE o.position = c.position)
    SELECT * FROM claimed;
  PERFORM set_config('baton.keeps_calls', 'off', true);
END;
$$;

-- As baton_write_lines, with each call's creation and attempt as columns too.
CREATE FUNCTION baton_write_calls(
  p_call_ids text[], p_call_sessions text[], p_call_tools text[], p_call_statuses text[],
  p_call_owners text[], p_call_ended bigint[], p_call_created bigint[], p_call_attempts int[],
  p_call_records text,
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
  written_positions bigint[];
  written_added boolean[];
  written_claimable boolean[];
  written_holders text[];
  queue_or_owners boolean;
BEGIN
  IF p_call_ids IS NOT NULL THEN
    PERFORM set_config('baton.keeps_calls', 'on', true);
    WITH input AS MATERIALIZED (
      SELECT * FROM unnest(p_call_ids, p_call_sessions, p_call_tools, p_call_statuses, p_call_owners,
                           p_call_ended, p_call_created, p_call_attempts,
                           string_to_array(p_call_records, E'\n')::json[])
        AS r(call_id, session_id, tool_name, status, owner_id, ended_at, created_at, attempt, record)),
    written AS (
      INSERT INTO calls (call_id, session_id, tool_name, status, owner_id, ended_at, created_at,
                         attempt, record)
      SELECT * FROM input
      -- No indexed column changes: the row's new version is heap-only (HOT).
      ON CONFLICT (call_id) DO UPDATE SET
        status = excluded.status, owner_id = excluded.owner_id, ended_at = excluded.ended_at,
        attempt = excluded.attempt, record = excluded.record
      WHERE (p_writer IS NULL OR ((calls.owner_id IS NULL OR calls.owner_id = p_writer)
                                  AND calls.ended_at IS NULL))
        AND calls.attempt <= excluded.attempt
      -- A new row has no xmax; one updated by ON CONFLICT carries the lock that chose it.
      RETURNING call_id, position, xmax = 0 AS added,
                baton_claimable(status, owner_id, record) AS claimable,
                baton_holder(status, owner_id, ended_at) AS holder)
    SELECT coalesce(array_agg(i.call_id) FILTER (WHERE w.call_id IS NOT NULL), '{}'),
           coalesce(array_agg(i.call_id) FILTER (WHERE w.call_id IS NULL), '{}'),
           array_agg(w.position) FILTER (WHERE w.call_id IS NOT NULL),
           array_agg(w.added) FILTER (WHERE w.call_id IS NOT NULL),
           array_agg(w.claimable) FILTER (WHERE w.call_id IS NOT NULL),
           array_agg(w.holder) FILTER (WHERE w.call_id IS NOT NULL),
           coalesce(bool_or(NOT w.added OR w.claimable OR w.holder IS NOT NULL), false)
      INTO accepted, refused, written_positions, written_added, written_claimable, written_holders,
           queue_or_owners
      FROM input AS i LEFT JOIN written AS w ON w.call_id = i.call_id;
    -- New calls that ended already (one process's) are in neither table: nothing to keep.
    IF queue_or_owners THEN
      PERFORM baton_keep_calls(written_positions, written_added, written_claimable, written_holders);
    END IF;
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
    IF cardinality(refused) > 0 AND entry->1->'records' IS NOT NULL THEN
      -- A record refused was not stored: its client is told which calls to read, not what it was.
      PERFORM pg_notify(entry->>0, json_build_object(
        'type', 'events', 'callIds', entry->1->'callIds', 'sessionIds', entry->1->'sessionIds',
        'writer', entry->1->'writer')::text);
    ELSE
      PERFORM pg_notify(entry->>0, (entry->1)::text);
    END IF;
  END LOOP;
  PERFORM set_config('baton.keeps_calls', 'off', true);
END;
$$;

-- The statements of processes of earlier versions, still running while this one starts: their
-- batches go through baton_write_calls, the creation and attempt read from each record.
CREATE OR REPLACE FUNCTION baton_write_lines(
  p_call_ids text[], p_call_sessions text[], p_call_tools text[], p_call_statuses text[],
  p_call_owners text[], p_call_ended bigint[], p_call_records text,
  p_row_calls text[], p_row_sessions text[], p_row_seqs int[], p_row_last_seqs int[],
  p_row_events text,
  p_notifications jsonb, p_artifacts jsonb, p_steps jsonb, p_schedules jsonb, p_resolutions jsonb,
  p_writer text, p_sessions text[], p_notices json
) RETURNS void LANGUAGE sql AS $$
  SELECT baton_write_calls(
    p_call_ids, p_call_sessions, p_call_tools, p_call_statuses, p_call_owners, p_call_ended,
    (SELECT array_agg((r->>'createdAt')::bigint ORDER BY n)
     FROM unnest(string_to_array(p_call_records, E'\n')::json[]) WITH ORDINALITY AS u(r, n)),
    (SELECT array_agg((r->>'attempt')::int ORDER BY n)
     FROM unnest(string_to_array(p_call_records, E'\n')::json[]) WITH ORDINALITY AS u(r, n)),
    p_call_records, p_row_calls, p_row_sessions, p_row_seqs, p_row_last_seqs, p_row_events,
    p_notifications, p_artifacts, p_steps, p_schedules, p_resolutions, p_writer, p_sessions,
    p_notices)
$$;

CREATE OR REPLACE FUNCTION baton_write_rows(
  p_calls json, p_event_rows json, p_notifications jsonb, p_artifacts jsonb, p_steps jsonb,
  p_schedules jsonb, p_resolutions jsonb, p_writer text, p_sessions text[], p_notices json
) RETURNS void LANGUAGE sql AS $$
  SELECT baton_write_calls(
    c.ids, c.sessions, c.tools, c.statuses, c.owners, c.ended, c.created, c.attempts, c.records,
    r.calls, r.sessions, r.seqs, r.last_seqs, r.events,
    p_notifications, p_artifacts, p_steps, p_schedules, p_resolutions, p_writer, p_sessions,
    coalesce(p_notices, '[]'))
  FROM (SELECT array_agg(x->>'callId' ORDER BY n) AS ids, array_agg(x->>'sessionId' ORDER BY n) AS sessions,
               array_agg(x->>'toolName' ORDER BY n) AS tools, array_agg(x->>'status' ORDER BY n) AS statuses,
               array_agg(x->>'ownerId' ORDER BY n) AS owners,
               array_agg((x->>'endedAt')::bigint ORDER BY n) AS ended,
               array_agg((x->>'createdAt')::bigint ORDER BY n) AS created,
               array_agg((x->>'attempt')::int ORDER BY n) AS attempts,
               string_agg(x::text, E'\n' ORDER BY n) AS records
        FROM json_array_elements(p_calls) WITH ORDINALITY AS t(x, n)) AS c,
       (SELECT array_agg(x->>'callId' ORDER BY n) AS calls, array_agg(x->>'sessionId' ORDER BY n) AS sessions,
               array_agg((x->>'seq')::int ORDER BY n) AS seqs,
               array_agg((x->>'lastSeq')::int ORDER BY n) AS last_seqs,
               string_agg((x->'events')::text, E'\n' ORDER BY n) AS events
        FROM json_array_elements(p_event_rows) WITH ORDINALITY AS t(x, n)) AS r
$$;
