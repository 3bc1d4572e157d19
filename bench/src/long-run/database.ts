import pg from 'pg';

/** What the database holds and does at one moment, for the long run's samples. */
export interface DatabaseSample {
  deadTuples: number;
  liveTuples: number;
  /** Tables, their indexes and TOAST, of the subject's schema, in bytes. */
  bytes: number;
  indexBytes: number;
  /** Client backends of the database, by state (active, idle, idle in transaction...). */
  connections: Record<string, number>;
  /** Active backends waiting, by wait event type (Lock, LWLock, IO, Client...). */
  waits: Record<string, number>;
  /** The subject's calls waiting to be claimed, where it says how to count them. */
  queued: number | undefined;
  /** How long the oldest of them has waited, in seconds. */
  oldestWaitingSeconds: number | undefined;
  autovacuums: number;
}

/** The long run's own sessions are named, so that a phase that kills backends spares them. */
export const HARNESS = 'baton-long-run';

export function harnessPool(url: string, max = 4): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max, application_name: HARNESS });
  // A connection the server dropped (a restart phase): the pool makes a new one for the next query.
  pool.on('error', () => {});
  return pool;
}

/**
 * Reads one sample of the database `schema` lives in; `queueSql` counts the subject's waiting calls
 * (`n`) and says how long the oldest has waited (`oldest`, seconds).
 */
export async function sampleDatabase(
  pool: pg.Pool,
  schema: string,
  queueSql: string | undefined,
): Promise<DatabaseSample> {
  const tables = await pool.query<{
    dead: string;
    live: string;
    bytes: string;
    index_bytes: string;
    vacuums: string;
  }>(
    `SELECT coalesce(sum(n_dead_tup), 0) AS dead, coalesce(sum(n_live_tup), 0) AS live,
            coalesce(sum(pg_total_relation_size(relid)), 0) AS bytes,
            coalesce(sum(pg_indexes_size(relid)), 0) AS index_bytes,
            coalesce(sum(autovacuum_count), 0) AS vacuums
       FROM pg_stat_user_tables WHERE schemaname = $1`,
    [schema],
  );
  const backends = await pool.query<{ state: string | null; wait: string | null; n: string }>(
    `SELECT state, CASE WHEN state = 'active' THEN wait_event_type END AS wait, count(*) AS n
       FROM pg_stat_activity
      WHERE datname = current_database() AND backend_type = 'client backend' AND application_name <> $1
      GROUP BY 1, 2`,
    [HARNESS],
  );
  const connections: Record<string, number> = {};
  const waits: Record<string, number> = {};
  for (const { state, wait, n } of backends.rows) {
    connections[state ?? 'unknown'] = (connections[state ?? 'unknown'] ?? 0) + Number(n);
    if (wait) waits[wait] = (waits[wait] ?? 0) + Number(n);
  }
  const queue = queueSql ? (await pool.query<{ n: string; oldest: string }>(queueSql)).rows[0] : undefined;
  const row = tables.rows[0];
  return {
    deadTuples: Number(row?.dead ?? 0),
    liveTuples: Number(row?.live ?? 0),
    bytes: Number(row?.bytes ?? 0),
    indexBytes: Number(row?.index_bytes ?? 0),
    connections,
    waits,
    queued: queue ? Number(queue.n) : undefined,
    oldestWaitingSeconds: queue ? Number(queue.oldest) : undefined,
    autovacuums: Number(row?.vacuums ?? 0),
  };
}
