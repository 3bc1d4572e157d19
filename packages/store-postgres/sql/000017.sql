-- A claim holds its calls with a plain insert into call_owners: a call a worker may
-- claim is held by no one, so no row of its is there (one there all the same, a row written by
-- hand say, has the insert made again as before, with ON CONFLICT). And the claim is planned once
-- per connection, not at every call for its limit, as PostgreSQL's plan cache kept doing: each of
-- its statements finds its rows by their keys, and with no sequential scan to choose its plan
-- does so whatever the tables' sizes when it was made (a plan kept from a small table would
-- otherwise scan it whole once it has grown, until the next ANALYZE).
CREATE OR REPLACE FUNCTION baton_claim(p_owner text, p_limit int, p_call_id text)
RETURNS TABLE (claimed_position bigint, claimed_record json, claimed_owner text,
               claimed_last_seq int, claimed_requests json)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $$
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
  -- Calls that no one owned: held by no one, so no row of theirs is in call_owners.
  BEGIN
    INSERT INTO call_owners (position, owner_id) SELECT unnest(taken), p_owner;
  EXCEPTION WHEN unique_violation THEN
    INSERT INTO call_owners (position, owner_id) SELECT unnest(taken), p_owner
    ON CONFLICT (position) DO UPDATE SET owner_id = excluded.owner_id;
  END;
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

