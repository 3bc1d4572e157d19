import { type RoleOptions, type RoleProcess, startRole } from '../role-process.js';
import { PEER_NODE_MIN, peerNode, peersInstalled } from '../suites/pg-peers.js';
import { roleEnv } from '../suites/postgres.js';

/** What the long run drives: Baton, or a queue doing the same work with a reply (`peers/pg-peer.mjs`). */
export interface Subject {
  name: string;
  /** Where its tables are, for the dead tuples and sizes. */
  schema: string;
  /** The table that holds its calls or jobs. */
  table: string;
  /** Its calls waiting for a worker (`n`) and how long the oldest has waited (`oldest`, seconds). */
  queueSql: string;
  /** Jobs one worker process runs at once: what the overload's service time is set from. */
  slotsPerWorker: number;
  /** The statement that says how every call it kept ended (`status`, `n`), where it keeps them. */
  statusesSql: string | undefined;
  start(url: string, role: 'caller' | 'worker' | 'both'): Promise<RoleProcess>;
}

/** Baton's worker runs 64 calls at once (`limits.concurrency`); the peers are set to the same. */
const SLOTS = 64;

function baton(): Subject {
  const schema = 'baton';
  return {
    name: 'Baton',
    schema,
    table: `${schema}.calls`,
    queueSql: `SELECT count(*) AS n,
         coalesce(extract(epoch FROM now()) - min(c.created_at) / 1000.0, 0) AS oldest
       FROM ${schema}.call_queue AS q JOIN ${schema}.calls AS c ON c.position = q.position`,
    slotsPerWorker: SLOTS,
    statusesSql: `SELECT status, count(*) AS n FROM ${schema}.calls GROUP BY status ORDER BY status`,
    start: (url, role) =>
      startRole({
        script: 'workers/pg-role.mjs',
        env: roleEnv(url, schema, role === 'caller' ? 'client' : role),
      }),
  };
}

function peer(name: 'pg-boss' | 'graphile-worker'): Subject {
  const node = peerNode();
  if (!node) {
    throw new Error(
      `the long run of ${name} needs Node ${PEER_NODE_MIN.join('.')} or later: run it on one, or name one in BENCH_PEER_NODE`,
    );
  }
  peersInstalled(node);
  const options = (url: string, role: string): RoleOptions => ({
    script: 'peers/pg-peer.mjs',
    // Batched per tick, as their row 8 runs (the ten lines a user would write).
    env: {
      PEER: name,
      MODE: 'batched',
      DATABASE_URL: url,
      ROLE: role === 'caller' ? 'adder' : role,
      SLOTS: String(SLOTS),
    },
    node,
  });
  return name === 'pg-boss'
    ? {
        name,
        schema: 'pgboss',
        table: 'pgboss.job',
        queueSql: `SELECT count(*) AS n, coalesce(extract(epoch FROM now() - min(created_on)), 0) AS oldest
           FROM pgboss.job WHERE name = 'bench' AND state IN ('created', 'retry')`,
        slotsPerWorker: SLOTS,
        statusesSql: `SELECT state AS status, count(*) AS n FROM pgboss.job WHERE name = 'bench' GROUP BY state`,
        start: (url, role) => startRole(options(url, role)),
      }
    : {
        name,
        schema: 'graphile_worker',
        table: 'graphile_worker._private_jobs',
        queueSql: `SELECT count(*) AS n, coalesce(extract(epoch FROM now() - min(run_at)), 0) AS oldest
           FROM graphile_worker._private_jobs WHERE locked_at IS NULL`,
        slotsPerWorker: SLOTS,
        // A completed job is deleted: what is left is what did not end.
        statusesSql: `SELECT CASE WHEN locked_at IS NULL THEN 'waiting' ELSE 'locked' END AS status, count(*) AS n
           FROM graphile_worker._private_jobs GROUP BY 1`,
        start: (url, role) => startRole(options(url, role)),
      };
}

export function subjectNamed(name: string): Subject {
  if (name === 'baton') return baton();
  if (name === 'pg-boss' || name === 'graphile-worker') return peer(name);
  throw new Error(`no subject ${name}: baton, pg-boss or graphile-worker`);
}
