import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRuntime } from '@baton/runtime';
import type { Store } from '@baton/store';
import { sqliteStore } from '@baton/store-sqlite';
import { addOnceTool, addOneTool, callAddOne } from '../add-one.js';
import type { BenchConfig } from '../config.js';
import { captureWrites, sqliteLimit, storeLimit } from '../limit.js';
import { atLeast, atMost, latencies, percentile, type Row, type Target, throughput } from '../measure.js';

/** A store to measure; the scale-out issue adds PostgreSQL here. */
export interface StoreUnderTest {
  name: string;
  synchronous: 'normal' | 'full';
  open(dir: string): Store;
  throughputTarget?: Target;
  loneCallerTarget?: Target;
  /** Baton's calls per second over the limit's (the same bytes straight into the store). */
  limitTarget?: Target;
  /** Baton's calls per second over the store's own, fed Baton's batches with no runtime. */
  storeLimitTarget?: Target;
}

export const LIMIT = "the limit: Baton's rows inserted straight, in Baton's batches";
const STORE_LIMIT = "the store's limit: Baton's batches written through the store, no runtime";

export const SQLITE_STORES: StoreUnderTest[] = [
  {
    name: 'SQLite (WAL, synchronous normal)',
    synchronous: 'normal',
    open: (dir) => sqliteStore({ path: join(dir, 'normal.db'), synchronous: 'normal' }),
    throughputTarget: atLeast(10_000, 'calls/s'),
    limitTarget: atLeast(0.5, 'x'),
    // The limit's target, of what the store itself does with Baton's schema: the store alone does
    // 0.37-0.42 of the limit (medians, bench/RESULTS.md), so no runtime on it reaches 0.5 of it.
    storeLimitTarget: atLeast(0.5, 'x'),
    // A commit driven by a timer would put its delay on every lone call.
    loneCallerTarget: atMost(1_000, 'µs'),
  },
  {
    name: 'SQLite (WAL, synchronous full)',
    synchronous: 'full',
    open: (dir) => sqliteStore({ path: join(dir, 'full.db'), synchronous: 'full' }),
  },
];

/** Every terminal state is written before its reply (the runtime's group commit). */
export async function throughStores(config: BenchConfig, stores = SQLITE_STORES): Promise<Row[]> {
  const rows: Row[] = [];
  for (const subject of stores) {
    const dir = mkdtempSync(join(tmpdir(), 'baton-bench-'));
    const runtime = createRuntime({ tools: [addOneTool, addOnceTool], store: subject.open(dir) });
    await runtime.ready;
    const call = (i: number) => callAddOne(runtime, i);
    const callOnce = (i: number) => runtime.call({ name: 'add_once', args: { i }, sessionId: `s${i % 16}` });
    // What Baton writes for these calls, captured once on a store of its own, for the limit.
    mkdirSync(join(dir, 'capture'));
    const captured = await captureWrites(subject.open(join(dir, 'capture')), config.calls, config.inFlight);
    const perSecond: number[] = [];
    const loneP50: number[] = [];
    const limit: number[] = [];
    const ofStore: number[] = [];
    const oncePerSecond: number[] = [];
    const onceLoneP50: number[] = [];
    for (let round = 0; round < config.rounds; round++) {
      perSecond.push(await throughput(config.calls, config.inFlight, call));
      loneP50.push(percentile(await latencies(Math.min(config.sequential, 2_000), call), 50));
      oncePerSecond.push(await throughput(config.calls, config.inFlight, callOnce));
      onceLoneP50.push(percentile(await latencies(Math.min(config.sequential, 2_000), callOnce), 50));
      limit.push(sqliteLimit(captured, join(dir, `limit-${round}.db`), subject.synchronous));
      mkdirSync(join(dir, `store-${round}`));
      ofStore.push(await storeLimit(captured, subject.open(join(dir, `store-${round}`))));
    }
    await runtime.close();
    rmSync(dir, { recursive: true, force: true });
    const measure = `2. inline call, ${subject.name}`;
    rows.push(
      {
        measure,
        subject: `Baton (${config.inFlight} in flight)`,
        unit: 'calls/s',
        values: perSecond,
        ...(subject.throughputTarget ? { target: subject.throughputTarget } : {}),
      },
      {
        measure,
        subject: LIMIT,
        unit: 'calls/s',
        values: limit,
      },
      {
        measure,
        subject: 'Baton / the limit',
        unit: 'x',
        values: perSecond.map((value, i) => value / (limit[i] ?? Number.NaN)),
        ...(subject.limitTarget ? { target: subject.limitTarget } : {}),
      },
      { measure, subject: STORE_LIMIT, unit: 'calls/s', values: ofStore },
      {
        measure,
        subject: "the store's limit / the limit",
        unit: 'x',
        values: ofStore.map((value, i) => value / (limit[i] ?? Number.NaN)),
      },
      {
        measure,
        subject: "Baton / the store's limit",
        unit: 'x',
        values: perSecond.map((value, i) => value / (ofStore[i] ?? Number.NaN)),
        ...(subject.storeLimitTarget ? { target: subject.storeLimitTarget } : {}),
      },
      {
        measure,
        subject: 'lone sequential caller p50',
        unit: 'µs',
        values: loneP50,
        ...(subject.loneCallerTarget ? { target: subject.loneCallerTarget } : {}),
      },
      // A tool that is not idempotent runs once its start is stored: a commit more on its way.
      {
        measure,
        subject: `not idempotent: Baton (${config.inFlight} in flight)`,
        unit: 'calls/s',
        values: oncePerSecond,
        comparedWith: `Baton (${config.inFlight} in flight)`,
      },
      { measure, subject: 'not idempotent: lone sequential caller p50', unit: 'µs', values: onceLoneP50 },
    );
  }
  return rows;
}
