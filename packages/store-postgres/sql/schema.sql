CREATE SCHEMA baton;

CREATE FUNCTION baton.baton_call_written() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
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

CREATE FUNCTION baton.baton_claim(p_owner text, p_limit integer, p_call_id text) RETURNS TABLE(claimed_position bigint, claimed_record json, claimed_owner text, claimed_last_seq integer, claimed_requests json)
    LANGUAGE plpgsql
    SET plan_cache_mode TO 'force_generic_plan'
    SET enable_seqscan TO 'off'
    AS $$
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

CREATE FUNCTION baton.baton_claim_orphans(p_owner text, p_gone text[]) RETURNS TABLE(claimed_position bigint, claimed_record json, claimed_owner text)
    LANGUAGE plpgsql
    AS $$
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

CREATE FUNCTION baton.baton_claimable(p_status text, p_owner text, p_record json) RETURNS boolean
    LANGUAGE sql IMMUTABLE
    AS $$
  SELECT CASE WHEN p_status <> 'queued' OR p_owner IS NOT NULL THEN false
              WHEN strpos(p_record::text, 'pending') = 0 THEN true
              ELSE (p_record->>'approval') IS DISTINCT FROM 'pending' END
$$;

CREATE FUNCTION baton.baton_holder(p_status text, p_owner text, p_ended bigint) RETURNS text
    LANGUAGE sql IMMUTABLE
    AS $$
  SELECT CASE WHEN p_ended IS NULL
                AND p_status NOT IN ('succeeded', 'failed', 'cancelled', 'timed_out')
              THEN p_owner END
$$;

CREATE FUNCTION baton.baton_keep_calls(p_written bigint[], p_added boolean[], p_claimable boolean[], p_holders text[]) RETURNS void
    LANGUAGE plpgsql
    AS $$
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

CREATE FUNCTION baton.baton_unheld(p_call text, p_writer text) RETURNS boolean
    LANGUAGE sql STABLE
    AS $$
  SELECT NOT EXISTS (
    SELECT 1 FROM calls owner WHERE owner.call_id = p_call
      AND (owner.owner_id <> p_writer OR (p_writer IS NOT NULL AND owner.ended_at IS NOT NULL)))
$$;

CREATE FUNCTION baton.baton_write_calls(p_call_ids text[], p_call_sessions text[], p_call_tools text[], p_call_statuses text[], p_call_owners text[], p_call_ended bigint[], p_call_created bigint[], p_call_attempts integer[], p_call_records text, p_row_calls text[], p_row_sessions text[], p_row_seqs integer[], p_row_last_seqs integer[], p_row_events text, p_notifications jsonb, p_artifacts jsonb, p_steps jsonb, p_schedules jsonb, p_resolutions jsonb, p_writer text, p_sessions text[], p_notice_channels text[], p_notice_payloads text, p_new_calls text[], p_first_try boolean, p_only_new_calls boolean, p_only_stored_calls boolean) RETURNS void
    LANGUAGE plpgsql
    AS $$
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

CREATE TABLE baton.artifacts (
    call_id text NOT NULL,
    name text NOT NULL,
    content text NOT NULL
);

CREATE TABLE baton.baton_schema (
    version integer NOT NULL,
    applied_at timestamp with time zone DEFAULT now() NOT NULL
);

CREATE TABLE baton.call_owners (
    "position" bigint NOT NULL,
    owner_id text NOT NULL
);

CREATE TABLE baton.call_queue (
    "position" bigint NOT NULL
);

CREATE TABLE baton.calls (
    "position" bigint NOT NULL,
    call_id text NOT NULL,
    session_id text NOT NULL,
    tool_name text NOT NULL,
    status text NOT NULL,
    owner_id text,
    ended_at bigint,
    record json NOT NULL,
    created_at bigint NOT NULL,
    attempt integer NOT NULL
)
WITH (fillfactor='30');

CREATE SEQUENCE baton.calls_position_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE baton.calls_position_seq OWNED BY baton.calls."position";

CREATE TABLE baton.event_resolutions (
    key text NOT NULL,
    call_id text NOT NULL,
    outcome jsonb NOT NULL,
    at bigint NOT NULL
);

CREATE SEQUENCE baton.event_rows_position
    START WITH 1
    INCREMENT BY 256
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

CREATE TABLE baton.event_rows (
    "position" bigint DEFAULT nextval('baton.event_rows_position'::regclass) NOT NULL,
    call_id text NOT NULL,
    seq integer NOT NULL,
    last_seq integer NOT NULL,
    session_id text NOT NULL,
    events json NOT NULL,
    CONSTRAINT event_rows_check CHECK (((last_seq >= seq) AND ((last_seq - seq) < 256)))
);

CREATE VIEW baton.events AS
 SELECT ((r."position" + e.n) - 1) AS "position",
    r.call_id,
    ((r.seq + (e.n)::integer) - 1) AS seq,
    r.session_id,
    e.event
   FROM baton.event_rows r,
    LATERAL json_array_elements(r.events) WITH ORDINALITY e(event, n);

CREATE TABLE baton.instances (
    id text NOT NULL,
    host text NOT NULL,
    pid integer NOT NULL,
    started_at bigint NOT NULL,
    heartbeat_at bigint NOT NULL,
    lease_ms bigint NOT NULL,
    boot text DEFAULT ''::text NOT NULL,
    protocol integer DEFAULT 0 NOT NULL
);

CREATE TABLE baton.notifications (
    "position" bigint NOT NULL,
    id text NOT NULL,
    call_id text NOT NULL,
    session_id text NOT NULL,
    status text NOT NULL,
    created_at bigint NOT NULL,
    acknowledged_at bigint,
    notification jsonb NOT NULL,
    held_by text
);

CREATE SEQUENCE baton.notifications_position_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE baton.notifications_position_seq OWNED BY baton.notifications."position";

CREATE TABLE baton.requests (
    "position" bigint NOT NULL,
    call_id text NOT NULL,
    request jsonb NOT NULL
);

CREATE SEQUENCE baton.requests_position_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE baton.requests_position_seq OWNED BY baton.requests."position";

CREATE TABLE baton.schedules (
    "position" bigint NOT NULL,
    id text NOT NULL,
    session_id text NOT NULL,
    enabled boolean NOT NULL,
    next_at bigint,
    schedule jsonb NOT NULL
);

CREATE SEQUENCE baton.schedules_position_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE baton.schedules_position_seq OWNED BY baton.schedules."position";

CREATE TABLE baton.steps (
    call_id text NOT NULL,
    step_id text NOT NULL,
    value jsonb NOT NULL
);

CREATE TABLE baton.webhook_deliveries (
    "position" bigint NOT NULL,
    id text NOT NULL,
    call_id text NOT NULL,
    session_id text NOT NULL,
    status text NOT NULL,
    next_at bigint NOT NULL,
    owner_id text,
    lease_until bigint,
    delivery jsonb NOT NULL
);

CREATE SEQUENCE baton.webhook_deliveries_position_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE baton.webhook_deliveries_position_seq OWNED BY baton.webhook_deliveries."position";

ALTER TABLE ONLY baton.calls ALTER COLUMN "position" SET DEFAULT nextval('baton.calls_position_seq'::regclass);

ALTER TABLE ONLY baton.notifications ALTER COLUMN "position" SET DEFAULT nextval('baton.notifications_position_seq'::regclass);

ALTER TABLE ONLY baton.requests ALTER COLUMN "position" SET DEFAULT nextval('baton.requests_position_seq'::regclass);

ALTER TABLE ONLY baton.schedules ALTER COLUMN "position" SET DEFAULT nextval('baton.schedules_position_seq'::regclass);

ALTER TABLE ONLY baton.webhook_deliveries ALTER COLUMN "position" SET DEFAULT nextval('baton.webhook_deliveries_position_seq'::regclass);

ALTER TABLE ONLY baton.artifacts
    ADD CONSTRAINT artifacts_pkey PRIMARY KEY (call_id, name);

ALTER TABLE ONLY baton.baton_schema
    ADD CONSTRAINT baton_schema_pkey PRIMARY KEY (version);

ALTER TABLE ONLY baton.call_owners
    ADD CONSTRAINT call_owners_pkey PRIMARY KEY ("position");

ALTER TABLE ONLY baton.call_queue
    ADD CONSTRAINT call_queue_pkey PRIMARY KEY ("position");

ALTER TABLE ONLY baton.calls
    ADD CONSTRAINT calls_call_id_key UNIQUE (call_id);

ALTER TABLE ONLY baton.calls
    ADD CONSTRAINT calls_pkey PRIMARY KEY ("position");

ALTER TABLE ONLY baton.event_resolutions
    ADD CONSTRAINT event_resolutions_pkey PRIMARY KEY (key);

ALTER TABLE ONLY baton.event_rows
    ADD CONSTRAINT event_rows_call_id_seq_key UNIQUE (call_id, seq);

ALTER TABLE ONLY baton.event_rows REPLICA IDENTITY USING INDEX event_rows_call_id_seq_key;

ALTER TABLE ONLY baton.instances
    ADD CONSTRAINT instances_pkey PRIMARY KEY (id);

ALTER TABLE ONLY baton.notifications
    ADD CONSTRAINT notifications_id_key UNIQUE (id);

ALTER TABLE ONLY baton.notifications
    ADD CONSTRAINT notifications_pkey PRIMARY KEY ("position");

ALTER TABLE ONLY baton.requests
    ADD CONSTRAINT requests_pkey PRIMARY KEY ("position");

ALTER TABLE ONLY baton.schedules
    ADD CONSTRAINT schedules_id_key UNIQUE (id);

ALTER TABLE ONLY baton.schedules
    ADD CONSTRAINT schedules_pkey PRIMARY KEY ("position");

ALTER TABLE ONLY baton.steps
    ADD CONSTRAINT steps_pkey PRIMARY KEY (call_id, step_id);

ALTER TABLE ONLY baton.webhook_deliveries
    ADD CONSTRAINT webhook_deliveries_id_key UNIQUE (id);

ALTER TABLE ONLY baton.webhook_deliveries
    ADD CONSTRAINT webhook_deliveries_pkey PRIMARY KEY ("position");

CREATE INDEX calls_by_creation ON baton.calls USING btree (created_at);

CREATE INDEX calls_by_session ON baton.calls USING btree (session_id, "position");

CREATE INDEX calls_by_tool ON baton.calls USING btree (tool_name, "position");

CREATE INDEX event_resolutions_by_call ON baton.event_resolutions USING btree (call_id);

CREATE INDEX event_rows_by_session ON baton.event_rows USING btree (session_id, "position");

CREATE INDEX notifications_by_session ON baton.notifications USING btree (session_id, status, created_at);

CREATE INDEX requests_by_call ON baton.requests USING btree (call_id, "position");

CREATE INDEX schedules_by_session ON baton.schedules USING btree (session_id);

CREATE INDEX webhook_deliveries_by_call ON baton.webhook_deliveries USING btree (call_id);

CREATE INDEX webhook_deliveries_by_session ON baton.webhook_deliveries USING btree (session_id, "position");

CREATE INDEX webhook_deliveries_due ON baton.webhook_deliveries USING btree (next_at) WHERE (status = 'pending'::text);

CREATE TRIGGER calls_written AFTER INSERT OR DELETE OR UPDATE ON baton.calls FOR EACH ROW WHEN ((current_setting('baton.keeps_calls'::text, true) IS DISTINCT FROM 'on'::text)) EXECUTE FUNCTION baton.baton_call_written();
