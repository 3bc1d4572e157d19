-- The schema of the first release, in one step. The steps before it were never released: no
-- database a user holds is at one of them, so they were folded into this one (the way
-- graphile-worker's numbered migrations start again from what shipped). sql/schema.sql is what it
-- makes, which a test compares with a fresh database. Only ever add a step after it.

-- Each call's record, one row per call. Its columns are what the queries find it by; none that a
-- claim or an end changes (status, owner_id, ended_at, attempt, record) is in an index, so that
-- both are heap-only updates (HOT), on a page with room for them (fillfactor). record is json, not
-- jsonb: PostgreSQL keeps json as the text it was given, where jsonb is converted on the way in,
-- and nothing queries inside it but ->>.
CREATE TABLE calls (
  position BIGSERIAL PRIMARY KEY, -- insertion order: newest first, and the list cursor
  call_id TEXT NOT NULL UNIQUE,
  session_id TEXT NOT NULL,
  tool_name TEXT NOT NULL,
  status TEXT NOT NULL,
  owner_id TEXT,
  ended_at BIGINT,
  record JSON NOT NULL,
  -- Retention finds ended calls by creation (a call ended before a time was created before it).
  created_at BIGINT NOT NULL,
  -- Which a write compares: a write of an earlier attempt never replaces a later one.
  attempt INTEGER NOT NULL
) WITH (fillfactor = 30);
CREATE INDEX calls_by_session ON calls (session_id, position);
-- Lists by tool, newest first, without reading every call (the API's ?tool=).
CREATE INDEX calls_by_tool ON calls (tool_name, position);
CREATE INDEX calls_by_creation ON calls (created_at);

-- What indexes on the changing columns would find, kept in two small tables of positions, each
-- row as long as the state it marks: call_queue, the calls that wait for a worker (queued, no
-- owner, no approval pending), which a claim takes from and deletes; call_owners, the unfinished
-- calls a process holds, which the recovery of a process gone reads. The store's statements keep
-- them as they write (baton_keep_calls, baton_claim); a trigger keeps them for any other writer of
-- the calls (a person, a script), and stays out of the way of the store's statements, which say
-- so for their transaction (baton.keeps_calls): a row trigger that ran for each of their rows cost
-- more than the rest of a claim.
CREATE TABLE call_queue (position BIGINT PRIMARY KEY);
CREATE TABLE call_owners (position BIGINT PRIMARY KEY, owner_id TEXT NOT NULL);

-- A call's events of one write in one row: a batch of 250 one-tick calls is 250 rows and 500
-- index entries instead of 750 and 1,500, and a third fewer bytes. A row's events have
-- consecutive seqs, seq to last_seq, at most 256 of them; its position is its first event's, and
-- the n-th is at position + n - 1: rows take positions 256 apart, so 2^45 rows fit below 2^53,
-- the largest position a JavaScript number holds exactly. A session's events are in the order of
-- its rows (writers of a session take turns), a write's rows in the order given. No query reads
-- rows by position alone, so the position has no index of its own; (call_id, seq), unique and not
-- null, identifies a row (for logical replication too).
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
-- The events one a row, at their positions, for people and scripts that read them (the store
-- reads event_rows).
CREATE VIEW events AS
  SELECT r.position + e.n - 1 AS position, r.call_id, r.seq + e.n::int - 1 AS seq,
         r.session_id, e.event
  FROM event_rows AS r, json_array_elements(r.events) WITH ORDINALITY AS e(event, n);

CREATE TABLE notifications (
  position BIGSERIAL PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  call_id TEXT NOT NULL,
  session_id TEXT NOT NULL,
  status TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  acknowledged_at BIGINT,
  notification JSONB NOT NULL,
  -- The instance that holds a notification a loop was given and has not acknowledged: none else
  -- takes it while that instance is registered (a process that died lets it go with its instance).
  held_by TEXT
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

-- The requests sent for calls (cancel, approve, reject), kept until their call is removed. A
-- request is a NOTIFY too, and a process whose LISTEN was down when it was sent, or that took the
-- call over from a process that died, reads what it did not hear here.
CREATE TABLE requests (
  position BIGSERIAL PRIMARY KEY,
  call_id TEXT NOT NULL,
  request JSONB NOT NULL
);
CREATE INDEX requests_by_call ON requests (call_id, position);

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

CREATE TABLE instances (
  id TEXT PRIMARY KEY,
  host TEXT NOT NULL,
  pid INTEGER NOT NULL,
  started_at BIGINT NOT NULL,
  heartbeat_at BIGINT NOT NULL,
  lease_ms BIGINT NOT NULL,
  -- Each process's random boot id: a new process with a dead one's PID is not taken for it.
  boot TEXT NOT NULL DEFAULT '',
  -- The version of what the processes sharing the store say to each other (RuntimeInstance's
  -- protocol).
  protocol INTEGER NOT NULL DEFAULT 0
);

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

-- Whether p_writer may write rows of a call whose record the batch does not hold: the call is
-- not someone else's and has not ended. The tests against a batch's accepted and refused calls
-- are IN (SELECT unnest(...)), which PostgreSQL hashes once per statement; = ANY(array) scans the
-- array for every row, and took a third of the database's time per call in batches of 1,000.
CREATE FUNCTION baton_unheld(p_call text, p_writer text) RETURNS boolean
LANGUAGE sql STABLE AS $$
  SELECT NOT EXISTS (
    SELECT 1 FROM calls owner WHERE owner.call_id = p_call
      AND (owner.owner_id <> p_writer OR (p_writer IS NOT NULL AND owner.ended_at IS NOT NULL)))
$$;

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
-- of their last event and the requests sent for them. It holds its calls with a plain insert into
-- call_owners: a call a worker may claim is held by no one, so no row of its is there (one there
-- all the same, a row written by hand say, has the insert made again with ON CONFLICT). It is
-- planned once per connection, not at every call for its limit: each of its statements finds its
-- rows by their keys, and with no sequential scan to choose does so whatever the tables' sizes
-- when the plan was made (a plan kept from a small table would otherwise scan it whole once it has
-- grown, until the next ANALYZE).
CREATE FUNCTION baton_claim(p_owner text, p_limit int, p_call_id text)
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

-- A batch of writes in one round trip, in the statement's own transaction: the records and the
-- event rows as columns (an array of each, and the JSON of each row on a line of its own, which
-- PostgreSQL splits faster than it parses a JSON array), then the notifications, artifacts,
-- steps, schedules and resolutions, then the notices, sent at the commit and only then (a listener
-- can read what it hears of). Fencing: a record replaces the stored one only while the call is
-- unfinished, by the instance that owns it (or by anyone while no one does), and never with an
-- earlier attempt; a call's other rows are written only with an accepted record from the same
-- batch or, without one, under the same rule (baton_unheld).
--
-- A write can be made again. A write whose answer was lost (the connection dropped after the
-- commit, a database that failed over) is made again, unchanged, and taken as written: a record
-- identical to the stored one is accepted (an end too), event rows already stored with the same
-- events are kept as they are (other events under the same numbers are refused), a notification
-- already stored is kept once. A write names the calls it makes (p_new_calls): one whose id is
-- stored already, by another record, is refused with the write (the same id sent to two
-- processes at once).
--
-- A first try (p_first_try) inserts its rows as they are, without ON CONFLICT: PostgreSQL's
-- speculative insertion (look, insert, confirm) cost one process more than the rest of a call's
-- write. A row stored already under the same key fails a first try with unique_violation, and the
-- store makes the write again as a second try, which tells those cases apart. A first try inserts
-- its calls so when they are all new (p_only_new_calls), and updates them with a plain UPDATE when
-- they are all stored already (p_only_stored_calls: a worker's claimed calls, a call's later
-- records); a call it does not find, or finds fenced or ahead of the write, fails the first try.
-- The notices go as text: their channels as an array, their payloads on a line each.
CREATE FUNCTION baton_write_calls(
  p_call_ids text[], p_call_sessions text[], p_call_tools text[], p_call_statuses text[],
  p_call_owners text[], p_call_ended bigint[], p_call_created bigint[], p_call_attempts int[],
  p_call_records text,
  p_row_calls text[], p_row_sessions text[], p_row_seqs int[], p_row_last_seqs int[], p_row_events text,
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
