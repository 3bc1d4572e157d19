-- A write's notices go as text, not JSON that the statement parses to take apart again: their
-- channels as an array, and their payloads on a line each (JSON has no raw newline). And a first
-- try whose calls are all stored already (p_only_stored_calls: a worker's claimed calls, a call's
-- later records) updates them with a plain UPDATE: a call it does not find, or finds fenced or
-- ahead of the write (a write made again, a claim since), fails the first try, and the second
-- tells those apart as before.
CREATE FUNCTION baton_write_calls(
  p_call_ids text[], p_call_sessions text[], p_call_tools text[], p_call_statuses text[],
  p_call_owners text[], p_call_ended bigint[], p_call_created bigint[], p_call_attempts int[],
  p_call_records text,
  p_row_calls text[], p_row_sessions text[], p_row_seqs int[], p_row_last_seqs int[],
  p_row_events text,
  p_notifications jsonb, p_artifacts jsonb, p_steps jsonb, p_schedules jsonb, p_resolutions jsonb,
  p_writer text, p_sessions text[], p_notice_channels text[], p_notice_payloads text,
  p_new_calls text[], p_first_try boolean, p_only_new_calls boolean, p_only_stored_calls boolean
) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  accepted text[] := '{}';
  refused text[] := '{}';
  later_calls text[];
  later_seqs int[];
  later_last_seqs int[];
  clash_call text;
  clash_seq int;
  written_positions bigint[];
  written_added boolean[];
  written_claimable boolean[];
  written_holders text[];
  queue_or_owners boolean;
  inserted_rows bigint;
  fenced_rows bigint;
BEGIN
  IF p_call_ids IS NOT NULL AND p_first_try AND p_only_new_calls THEN
    PERFORM set_config('baton.keeps_calls', 'on', true);
    -- New rows of the calls, the queue and the owners: no row of theirs can be stored already.
    WITH written AS (
      INSERT INTO calls (call_id, session_id, tool_name, status, owner_id, ended_at, created_at,
                         attempt, record)
      SELECT * FROM unnest(p_call_ids, p_call_sessions, p_call_tools, p_call_statuses, p_call_owners,
                           p_call_ended, p_call_created, p_call_attempts,
                           string_to_array(p_call_records, E'\n')::json[])
      RETURNING position, baton_claimable(status, owner_id, record) AS claimable,
                baton_holder(status, owner_id, ended_at) AS holder),
    queued AS (INSERT INTO call_queue (position) SELECT position FROM written WHERE claimable),
    held AS (
      INSERT INTO call_owners (position, owner_id)
      SELECT position, holder FROM written WHERE holder IS NOT NULL)
    SELECT count(*) INTO inserted_rows FROM written;
    accepted := p_call_ids;
  ELSIF p_call_ids IS NOT NULL AND p_first_try AND p_only_stored_calls THEN
    PERFORM set_config('baton.keeps_calls', 'on', true);
    WITH written AS (
      UPDATE calls SET status = r.status, owner_id = r.owner_id, ended_at = r.ended_at,
                       attempt = r.attempt, record = r.record
      FROM unnest(p_call_ids, p_call_statuses, p_call_owners, p_call_ended, p_call_attempts,
                  string_to_array(p_call_records, E'\n')::json[])
        AS r(call_id, status, owner_id, ended_at, attempt, record)
      WHERE calls.call_id = r.call_id
        AND (p_writer IS NULL OR ((calls.owner_id IS NULL OR calls.owner_id = p_writer)
                                  AND calls.ended_at IS NULL))
        AND calls.attempt <= r.attempt
      RETURNING calls.position, baton_claimable(calls.status, calls.owner_id, calls.record) AS claimable,
                baton_holder(calls.status, calls.owner_id, calls.ended_at) AS holder)
    SELECT count(*), array_agg(position), array_agg(false), array_agg(claimable), array_agg(holder)
      INTO inserted_rows, written_positions, written_added, written_claimable, written_holders
      FROM written;
    IF inserted_rows < cardinality(p_call_ids) THEN
      RAISE EXCEPTION 'a call of the write is not stored as it expects' USING ERRCODE = 'unique_violation';
    END IF;
    accepted := p_call_ids;
    PERFORM baton_keep_calls(written_positions, written_added, written_claimable, written_holders);
  ELSIF p_call_ids IS NOT NULL THEN
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
      WHERE ((p_writer IS NULL OR ((calls.owner_id IS NULL OR calls.owner_id = p_writer)
                                   AND calls.ended_at IS NULL))
             AND calls.attempt <= excluded.attempt
             -- A call this write makes never replaces one stored under its id.
             AND (p_new_calls IS NULL OR excluded.call_id <> ALL(p_new_calls)))
        -- The same record again, still held as it was: this write had committed and is made
        -- again (its answer was lost), an end included. It changes nothing, and the rest of the
        -- write is not refused. (A claim changes the owner alone: a call claimed since is fenced.)
        OR (calls.record::text = excluded.record::text
            AND calls.owner_id IS NOT DISTINCT FROM excluded.owner_id)
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
    IF p_new_calls IS NOT NULL THEN
      -- The same id sent to two processes at once: the one that comes second is refused whole,
      -- and reads the call the first made.
      SELECT n INTO clash_call FROM unnest(p_new_calls) AS n WHERE n = ANY(refused) LIMIT 1;
      IF FOUND THEN
        RAISE EXCEPTION 'call % exists already', clash_call USING ERRCODE = 'unique_violation';
      END IF;
    END IF;
    -- New calls that ended already (one process's) are in neither table: nothing to keep.
    IF queue_or_owners THEN
      PERFORM baton_keep_calls(written_positions, written_added, written_claimable, written_holders);
    END IF;
  END IF;
  IF p_row_calls IS NOT NULL THEN
    PERFORM pg_advisory_xact_lock(key) FROM (
      SELECT DISTINCT hashtext('baton-session:' || session) AS key
      FROM unnest(p_sessions) AS session ORDER BY key) AS keys;
    IF p_first_try THEN
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
    ELSE
      WITH input AS MATERIALIZED (
        SELECT r.call_id, r.seq, r.last_seq, r.session_id, r.events, r.n
        FROM unnest(p_row_calls, p_row_seqs, p_row_last_seqs, p_row_sessions,
                    string_to_array(p_row_events, E'\n')::json[]) WITH ORDINALITY
          AS r(call_id, seq, last_seq, session_id, events, n)
        WHERE r.call_id IN (SELECT unnest(accepted))
           OR (r.call_id NOT IN (SELECT unnest(refused)) AND baton_unheld(r.call_id, p_writer))),
      inserted AS (
        INSERT INTO event_rows (call_id, seq, last_seq, session_id, events)
        SELECT call_id, seq, last_seq, session_id, events FROM input ORDER BY n
        ON CONFLICT (call_id, seq) DO NOTHING
        RETURNING call_id, seq, last_seq)
      SELECT array_agg(call_id) FILTER (WHERE seq > 1), array_agg(seq) FILTER (WHERE seq > 1),
             array_agg(last_seq) FILTER (WHERE seq > 1), count(*), (SELECT count(*) FROM input)
        INTO later_calls, later_seqs, later_last_seqs, inserted_rows, fenced_rows FROM inserted;
      IF inserted_rows < fenced_rows THEN
        -- Rows stored already: the same write made again (its answer was lost), which keeps them as
        -- they are, or another writer's events under the same numbers, which is refused.
        SELECT r.call_id, r.seq INTO clash_call, clash_seq
          FROM unnest(p_row_calls, p_row_seqs, string_to_array(p_row_events, E'\n')::json[])
            AS r(call_id, seq, events)
          WHERE (r.call_id IN (SELECT unnest(accepted))
                 OR (r.call_id NOT IN (SELECT unnest(refused)) AND baton_unheld(r.call_id, p_writer)))
            AND NOT EXISTS (SELECT 1 FROM event_rows AS p
                            WHERE p.call_id = r.call_id AND p.seq = r.seq AND p.events::text = r.events::text)
          LIMIT 1;
        IF FOUND THEN
          RAISE EXCEPTION 'call % already has other events from %', clash_call, clash_seq
            USING ERRCODE = 'unique_violation';
        END IF;
      END IF;
    END IF;
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
       OR ((x->>'callId') NOT IN (SELECT unnest(refused)) AND baton_unheld(x->>'callId', p_writer))
    -- A notification stored already: the same write made again.
    ON CONFLICT (id) DO NOTHING;
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
  IF p_notice_channels IS NOT NULL THEN
    -- A record refused was not stored: its client is told which calls to read, not what it was.
    PERFORM pg_notify(n.channel, CASE
        WHEN cardinality(refused) = 0 OR strpos(n.payload, '"records":[') = 0 THEN n.payload
        ELSE (SELECT json_build_object('type', 'events', 'callIds', p->'callIds',
                                       'sessionIds', p->'sessionIds', 'writer', p->'writer')::text
              FROM (SELECT n.payload::json AS p) AS parsed) END)
      FROM unnest(p_notice_channels, string_to_array(p_notice_payloads, E'\n')) AS n(channel, payload);
  END IF;
  PERFORM set_config('baton.keeps_calls', 'off', true);
END;
$$;


-- The statement of the step before, still used by processes of that version during a rolling
-- start (and by the earlier ones through it): its notices, a JSON array of [channel, notice], as
-- text.
CREATE OR REPLACE FUNCTION baton_write_calls(
  p_call_ids text[], p_call_sessions text[], p_call_tools text[], p_call_statuses text[],
  p_call_owners text[], p_call_ended bigint[], p_call_created bigint[], p_call_attempts int[],
  p_call_records text,
  p_row_calls text[], p_row_sessions text[], p_row_seqs int[], p_row_last_seqs int[],
  p_row_events text,
  p_notifications jsonb, p_artifacts jsonb, p_steps jsonb, p_schedules jsonb, p_resolutions jsonb,
  p_writer text, p_sessions text[], p_notices json, p_new_calls text[], p_first_try boolean,
  p_only_new_calls boolean
) RETURNS void LANGUAGE sql AS $$
  SELECT baton_write_calls(
    p_call_ids, p_call_sessions, p_call_tools, p_call_statuses, p_call_owners, p_call_ended,
    p_call_created, p_call_attempts, p_call_records, p_row_calls, p_row_sessions, p_row_seqs,
    p_row_last_seqs, p_row_events, p_notifications, p_artifacts, p_steps, p_schedules,
    p_resolutions, p_writer, p_sessions,
    (SELECT array_agg(e->>0 ORDER BY n) FROM json_array_elements(p_notices) WITH ORDINALITY AS t(e, n)),
    (SELECT string_agg((e->1)::text, E'\n' ORDER BY n)
     FROM json_array_elements(p_notices) WITH ORDINALITY AS t(e, n)),
    p_new_calls, p_first_try, p_only_new_calls, false)
$$;
