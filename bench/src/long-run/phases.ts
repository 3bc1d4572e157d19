import { setTimeout as sleep } from 'node:timers/promises';
import type { ThrowawayPostgres } from '@baton/store-postgres/testing';
import type pg from 'pg';
import { HARNESS } from './database.js';

/** What a phase may act on: the database server, the harness's own sessions, the subject's schema. */
export interface PhaseContext {
  postgres: ThrowawayPostgres;
  pool: pg.Pool;
  schema: string;
  /** The rate the subject is offered in the phase, in calls per second. */
  rate: number;
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
  async start({ pool, schema }) {
    let going = true;
    const reader = async () => {
      while (going) {
        const client = await pool.connect();
        try {
          await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
          await client.query(`SELECT count(*) FROM ${schema}.calls`);
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
];
