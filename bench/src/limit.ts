import { createRuntime } from '@baton/runtime';
import { eventRowsOf, type Store, type StoreWrite } from '@baton/store';
import Database from 'better-sqlite3';
import pg from 'pg';
import { addOneTool, callAddOne } from './add-one.js';
import { throughput } from './measure.js';

/** What Baton wrote for a number of calls: each batch, copied, in the order and grouping Baton wrote them. */
export interface CapturedWrites {
  calls: number;
  batches: StoreWrite[];
}

/**
 * The rows of a batch, each as the JSON a store keeps of it: a row per record, notification and
 * the rest, and a call's events of the batch in one row, as both SQL stores keep them.
 */
function rowsOf(batch: StoreWrite): string[] {
  const rows: string[] = [];
  for (const kind of ['calls', 'notifications', 'artifacts', 'steps', 'resolutions', 'schedules'] as const) {
    for (const row of batch[kind] ?? []) rows.push(JSON.stringify(row));
  }
  for (const { events } of eventRowsOf(batch.events ?? [])) rows.push(JSON.stringify(events));
  return rows;
}

/** `store`, keeping a copy of each batch written through it in `batches`, in order. */
export function keepingWrites(store: Store, batches: StoreWrite[]): Store {
  return Object.assign(Object.create(store) as Store, {
    write(batch: StoreWrite) {
      batches.push(JSON.parse(JSON.stringify(batch)) as StoreWrite);
      return store.write(batch);
    },
  });
}

/** Runs `calls` no-op calls, `inFlight` at a time, through Baton on `store`, and keeps what it wrote. */
export async function captureWrites(store: Store, calls: number, inFlight: number): Promise<CapturedWrites> {
  const batches: StoreWrite[] = [];
  const runtime = createRuntime({
    tools: [addOneTool],
    store: keepingWrites(store, batches),
    inlineBudgetMs: 60_000,
  });
  await runtime.ready;
  await throughput(calls, inFlight, (i) => callAddOne(runtime, i));
  await runtime.close();
  return { calls, batches };
}

/**
 * The store's own speed for Baton's bytes: the captured batches inserted straight into one SQLite
 * table (WAL, the same `synchronous`), a transaction per batch, one at a time (a call's events of
 * a batch in one row, as Baton keeps them); calls per second.
 */
export function sqliteLimit(captured: CapturedWrites, path: string, synchronous: 'normal' | 'full'): number {
  const db = new Database(path);
  try {
    db.pragma('journal_mode = WAL');
    db.pragma(`synchronous = ${synchronous.toUpperCase()}`);
    db.exec('CREATE TABLE rows (id INTEGER PRIMARY KEY, body TEXT NOT NULL)');
    const insert = db.prepare('INSERT INTO rows (body) VALUES (?)');
    const writeBatch = db.transaction((rows: string[]) => {
      for (const row of rows) insert.run(row);
    });
    const batches = captured.batches.map((batch) => rowsOf(batch));
    const started = performance.now();
    for (const rows of batches) writeBatch(rows);
    return captured.calls / ((performance.now() - started) / 1_000);
  } finally {
    db.close();
  }
}

/**
 * The store's own speed for Baton's batches: the captured batches written through a fresh store of
 * the same kind (`store.write`), all at once, with no runtime. What the store does is what Baton
 * needs of it (its schema, with the indexes its queries use; its writer thread), so no runtime on
 * it can do more; calls per second, until every batch is written.
 */
export async function storeLimit(captured: CapturedWrites, store: Store): Promise<number> {
  try {
    // The store opens (and migrates) before the clock starts.
    await store.getCall('warm-up');
    const started = performance.now();
    await Promise.all(captured.batches.map((batch) => store.write(batch)));
    return captured.calls / ((performance.now() - started) / 1_000);
  } finally {
    await store.close();
  }
}

/**
 * The same on PostgreSQL: each captured batch as one INSERT of its rows (JSONB) into one table of
 * a fresh schema, one batch at a time; calls per second.
 */
export async function postgresLimit(captured: CapturedWrites, url: string, schema: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`CREATE SCHEMA ${schema}`);
    await client.query(`CREATE TABLE ${schema}.rows (id BIGSERIAL PRIMARY KEY, body JSONB NOT NULL)`);
    const insert = {
      name: `limit_${schema}`,
      text: `INSERT INTO ${schema}.rows (body) SELECT unnest($1::text[])::jsonb`,
    };
    const batches = captured.batches.map((batch) => rowsOf(batch));
    const started = performance.now();
    for (const rows of batches) await client.query({ ...insert, values: [rows] });
    return captured.calls / ((performance.now() - started) / 1_000);
  } finally {
    await client.query(`DROP SCHEMA ${schema} CASCADE`);
    await client.end();
  }
}
