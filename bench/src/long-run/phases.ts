import { setTimeout as sleep } from 'node:timers/promises';
import type { ThrowawayPostgres } from '@baton/store-postgres/testing';
import pg from 'pg';
import { HARNESS } from './database.js';

/**
 * What a phase may act on: the database server, the harness's own sessions, the subject's main
 * table, the rate it is offered, and its processes.
 */
export interface PhaseContext {
  postgres: ThrowawayPostgres;
  pool: pg.Pool;
  /** The table that holds the subject's calls or jobs (a report reads it). */
  table: string;
  /** The rate the subject is offered between phases, in calls per second. */
  rate: number;
  /** How long the phase lasts, in ms. */
  phaseMs: number;
  /** Offers the subject another rate, in calls per second. */
  offer(perSecond: number): void;
  /** Each job the subject's workers run takes this long from now on (0: no longer than its work). */
  serviceTime(ms: number): void;
  /** Jobs the subject's workers run at once, in all. */
  slots: number;
  /** SIGKILLs one of the subject's worker processes and starts another in its place. */
  replaceWorker(): Promise<void>;
}

/** A phase of the long run: its fault starts with it, and the returned function ends the fault. */
export interface Phase {
  name: string;
  /** What the phase does to the database, in a few words (for the plot and RESULTS). */
  fault: string;
  start(context: PhaseContext): Promise<() => Promise<void>>;
}

const nothing = async () => async () => {};

/**
 * One session idle in a transaction that has an id: the horizon stays where it began, so no
 * vacuum removes what any write left dead since (a forgotten `BEGIN` in an operator's session).
 */
const idleInTransaction: Phase = {
  name: 'idle-in-transaction',
  fault: 'a session idle in a transaction holds the horizon',
  async start({ pool }) {
    const client = await pool.connect();
    await client.query('BEGIN');
    await client.query('SELECT txid_current()');
    return async () => {
      await client.query('ROLLBACK');
      client.release();
    };
  },
};

/** Four readers in `REPEATABLE READ`, each holding a snapshot for 2 s, one after another: reports. */
const repeatableReadReaders: Phase = {
  name: 'repeatable-read-readers',
  fault: 'four REPEATABLE READ readers, each snapshot held 2 s',
  async start({ pool, table }) {
    let going = true;
    const reader = async () => {
      while (going) {
        const client = await pool.connect();
        try {
          await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
          await client.query(`SELECT count(*) FROM ${table}`);
          await client.query('SELECT pg_sleep(2)');
          await client.query('COMMIT');
        } finally {
          client.release();
        }
      }
    };
    const readers = Array.from({ length: 4 }, reader);
    return async () => {
      going = false;
      await Promise.all(readers);
    };
  },
};

/** The subject's backends killed twice a second (an administrator's, or a pooler's, kills). */
const backendKills: Phase = {
  name: 'backend-kills',
  fault: "the subject's backends killed twice a second",
  async start({ pool }) {
    let going = true;
    const killing = (async () => {
      while (going) {
        await pool.query(
          `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
            WHERE datname = current_database() AND backend_type = 'client backend'
              AND application_name <> $1 AND pid <> pg_backend_pid()`,
          [HARNESS],
        );
        await sleep(500);
      }
    })();
    return async () => {
      going = false;
      await killing;
    };
  },
};

/** PostgreSQL stopped for 20 s, past the runtime's ride-out of 15 s: calls fail, then come back. */
const longRestart: Phase = {
  name: 'long-restart',
  fault: 'PostgreSQL down 20 s, past the 15 s ride-out',
  async start({ postgres }) {
    const outage = postgres.outage(20_000);
    return () => outage;
  },
};

/**
 * A burst that needs new connections while the server has none to spare: every connection but
 * three held idle by the harness (the subject's pools keep those they have; PostgreSQL refuses the
 * rest with `too many clients`), and the subject offered twice its rate.
 */
const poolExhaustionBurst: Phase = {
  name: 'pool-exhaustion-burst',
  fault: "all but 3 of PostgreSQL's free connections held; the offer doubled",
  async start({ postgres, pool, rate, offer }) {
    const { rows } = await pool.query<{ free: number }>(
      `SELECT current_setting('max_connections')::int - current_setting('superuser_reserved_connections')::int
              - (SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend')::int AS free`,
    );
    const holding = Math.max(0, (rows[0]?.free ?? 0) - 3);
    const held: pg.Client[] = [];
    for (let i = 0; i < holding; i++) {
      const client = new pg.Client({ connectionString: postgres.url, application_name: HARNESS });
      client.on('error', () => {});
      await client.connect();
      held.push(client);
    }
    offer(2 * rate);
    return async () => {
      offer(rate);
      await Promise.all(held.map((client) => client.end().catch(() => {})));
    };
  },
};

/**
 * Sustained overload: the workers end two thirds of what is offered, each job holding its slot
 * for 1.5 x slots / rate seconds (Baton 64 slots at 200 calls/s: 480 ms), the 1.5x.
 */
const overload: Phase = {
  name: 'overload',
  fault: 'the workers end two thirds of what is offered (1.5x overload)',
  async start({ serviceTime, slots, rate }) {
    serviceTime(Math.round((1.5 * slots * 1_000) / rate));
    return async () => serviceTime(0);
  },
};

/** A worker process SIGKILLed every 15 s (every half phase in a short one), another started at once. */
const workerKills: Phase = {
  name: 'worker-kills',
  fault: 'a worker process SIGKILLed every 15 s, another started in its place',
  async start({ replaceWorker, phaseMs }) {
    const every = Math.min(15_000, phaseMs / 2);
    let going = true;
    const killing = (async () => {
      let since = performance.now();
      while (going) {
        await sleep(200);
        if (going && performance.now() - since >= every) {
          await replaceWorker();
          since = performance.now();
        }
      }
    })();
    return async () => {
      going = false;
      await killing;
    };
  },
};

/** The phases of a run, in order: each fault between two clean stretches to recover in. */
export const PHASES: readonly Phase[] = [
  { name: 'warm-up', fault: 'none: the JIT and the caches warm', start: nothing },
  { name: 'clean', fault: 'none', start: nothing },
  idleInTransaction,
  { name: 'recovery-1', fault: 'none', start: nothing },
  repeatableReadReaders,
  { name: 'recovery-2', fault: 'none', start: nothing },
  backendKills,
  { name: 'recovery-3', fault: 'none', start: nothing },
  longRestart,
  { name: 'recovery-4', fault: 'none', start: nothing },
  poolExhaustionBurst,
  { name: 'recovery-5', fault: 'none', start: nothing },
  overload,
  { name: 'recovery-6', fault: 'none', start: nothing },
  workerKills,
  { name: 'recovery-7', fault: 'none', start: nothing },
];

/** The phases that refuse calls by design: past the ride-out, and past what a client may hold. */
export const REFUSING_PHASES: ReadonlySet<string> = new Set([
  'long-restart',
  'recovery-4',
  'overload',
  'recovery-6',
]);
