import { createRuntime } from '@baton/runtime';
import type { Store, StoreWrite } from '@baton/store';
import { postgresStore } from '@baton/store-postgres';
import { throwawayPostgres } from '@baton/store-postgres/testing';
import pg from 'pg';
import { addOneTool, callAddOne } from '../add-one.js';
import type { BenchConfig } from '../config.js';
import { captureWrites, keepingWrites } from '../limit.js';
import { type Row, throughput } from '../measure.js';
import { serverCpuMeter } from '../server-cpu.js';

const MEASURE = "7. PostgreSQL CPU per call of each part, Baton's writes replayed one at a time";
const ONE_PROCESS = "one process's writes";

/** What a client and a worker runtime asked of PostgreSQL for a number of calls, in order. */
interface CapturedSplit {
  client: StoreWrite[];
  worker: StoreWrite[];
  /** The worker's claims: who claimed, and how many calls each took. */
  claims: { ownerId: string; taken: number }[];
}

/** A store that keeps a copy of every write, and the size of every claim, done through it. */
function capturing(store: Store, writes: StoreWrite[], claims?: CapturedSplit['claims']): Store {
  const kept = keepingWrites(store, writes);
  return Object.assign(kept, {
    async claimQueued(ownerId: string, limit: number, callId?: string) {
      const claimed = await store.claimQueued(ownerId, limit, callId);
      if (claimed.length > 0) {
        if (!claims) throw new Error('a client claimed a call: its budget passed while capturing');
        claims.push({ ownerId, taken: claimed.length });
      }
      return claimed;
    },
  });
}

/** Runs `calls` no-op calls through a client and a worker runtime on one schema, and keeps their writes and claims. */
async function captureSplit(
  url: string,
  schema: string,
  calls: number,
  inFlight: number,
): Promise<CapturedSplit> {
  const captured: CapturedSplit = { client: [], worker: [], claims: [] };
  const store = () => postgresStore({ connectionString: url, schema });
  const worker = createRuntime({
    tools: [addOneTool],
    store: capturing(store(), captured.worker, captured.claims),
    role: 'worker',
  });
  // A budget no call reaches: every reply is the call's end, as in row 7's rounds.
  const client = createRuntime({
    tools: [addOneTool],
    store: capturing(store(), captured.client),
    role: 'client',
    inlineBudgetMs: 60_000,
  });
  try {
    await Promise.all([worker.ready, client.ready]);
    await throughput(calls, inFlight, (i) => callAddOne(client, i));
  } finally {
    await Promise.all([client.close(), worker.close()]);
  }
  return captured;
}

/**
 * Where the split path's cost to PostgreSQL goes: what a client and a worker runtime wrote and
 * claimed for row 7's calls, captured once, then replayed on a fresh schema through the store one
 * statement at a time, part by part (every client write, every claim, every worker write), beside
 * the same calls' writes by one process that runs them. No runtime runs during a replay:
 * each part's figure is the server's CPU for what Baton asks of it, the floor under row 7's.
 */
export async function postgresParts(config: BenchConfig): Promise<Row[]> {
  const server = await throwawayPostgres();
  const calls = config.pgCalls;
  const parts = {
    [ONE_PROCESS]: [] as number[],
    'split: the client stores each call': [] as number[],
    'split: the worker claims it': [] as number[],
    'split: the worker stores its end': [] as number[],
    'split: all three': [] as number[],
  };
  const serverCpu = await serverCpuMeter(server.url);
  if (!serverCpu) {
    await server.stop();
    return [];
  }
  const admin = new pg.Client({ connectionString: server.url });
  await admin.connect();
  let schemas = 0;
  const freshSchema = () => `bench_${process.pid}_parts_${schemas++}`;
  try {
    const captureSchema = freshSchema();
    const oneProcess = await captureWrites(
      postgresStore({ connectionString: server.url, schema: captureSchema }),
      calls,
      config.inFlight,
    );
    const splitSchema = freshSchema();
    const split = await captureSplit(server.url, splitSchema, calls, config.inFlight);
    await admin.query(`DROP SCHEMA ${captureSchema} CASCADE; DROP SCHEMA ${splitSchema} CASCADE`);
    const cpuPerCall = async (work: () => Promise<void>) => {
      const before = serverCpu();
      await work();
      return (serverCpu() - before) / calls;
    };
    const replayOneProcess = async (store: Store) => {
      parts[ONE_PROCESS].push(await cpuPerCall(() => writeAll(store, oneProcess.batches)));
    };
    const replaySplit = async (store: Store) => {
      const client = await cpuPerCall(() => writeAll(store, split.client));
      const claim = await cpuPerCall(async () => {
        for (const { ownerId, taken } of split.claims) await store.claimQueued(ownerId, taken);
      });
      const end = await cpuPerCall(() => writeAll(store, split.worker));
      parts['split: the client stores each call'].push(client);
      parts['split: the worker claims it'].push(claim);
      parts['split: the worker stores its end'].push(end);
      parts['split: all three'].push(client + claim + end);
    };
    for (let round = 0; round < config.rounds; round++) {
      for (const replay of [replayOneProcess, replaySplit]) {
        const schema = freshSchema();
        const store = postgresStore({ connectionString: server.url, schema, maxConnections: 1 });
        try {
          // The store opens (and migrates) before any part is counted.
          await store.getCall('warm-up');
          await replay(store);
        } finally {
          await store.close();
          await admin.query(`DROP SCHEMA ${schema} CASCADE`);
        }
      }
    }
  } finally {
    await admin.end();
    await server.stop();
  }
  return Object.entries(parts).map(([subject, values]) => ({
    measure: MEASURE,
    subject,
    unit: 'µs',
    values,
    ...(subject === ONE_PROCESS ? {} : { comparedWith: ONE_PROCESS }),
  }));
}

async function writeAll(store: Store, batches: readonly StoreWrite[]): Promise<void> {
  for (const batch of batches) await store.write(batch);
}
