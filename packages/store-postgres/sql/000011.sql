-- As baton_write_rows, with the records and the event rows given as columns: an array of each
-- column, and the JSON of each row on a line of its own (JSON.stringify never writes a newline).
-- A write was parsing each row's JSON four times: the parameter's json, json_array_elements,
-- json_to_record, and the events again as a json field; a third of PostgreSQL's CPU in the
-- bench. Now each row's JSON is read once, as it becomes json, and the backend spends less CPU per
-- call (bench/RESULTS.md, row 7). baton_write_rows stays for
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
