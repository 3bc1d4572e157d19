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
