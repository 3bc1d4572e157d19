// A process of the PostgreSQL measures, in the role ROLE (`client`, `worker` or `both`) on one
// schema. It counts its database queries (every query of a pg client, the store's included) and
// its CPU, and is driven by the line protocol of role-protocol.mjs (a worker is only told `report`).
import { defineTool } from '@baton/contracts';
import { createRuntime } from '@baton/runtime';
import { postgresStore } from '@baton/store-postgres';
import pg from 'pg';
import { z } from 'zod';
import { countQueries, jobStarted, serve } from './role-protocol.mjs';

countQueries(pg);

const role = ['client', 'worker', 'both'].includes(process.env.ROLE) ? process.env.ROLE : 'worker';
const runtime = createRuntime({
  tools: [
    defineTool({
      name: 'add_one',
      description: 'adds one',
      input: z.object({ i: z.number(), madeAt: z.number().optional() }),
      // Idempotent, as adding one is: it runs at once (see add-one.ts).
      execution: { idempotent: true },
      execute: async ({ i, madeAt }) => {
        await jobStarted(madeAt);
        return i + 1;
      },
    }),
  ],
  store: postgresStore({
    connectionString: process.env.BATON_PG_URL,
    schema: process.env.BATON_PG_SCHEMA,
    maxConnections: 10,
    // Pipelined writes (role both): BENCH_PG_WRITE_CONCURRENCY batches in flight at most, of
    // BENCH_PG_WRITE_BATCH_CALLS calls each (the store's defaults when unset: 3 and 250).
    ...(process.env.BENCH_PG_WRITE_CONCURRENCY
      ? { writeConcurrency: Number(process.env.BENCH_PG_WRITE_CONCURRENCY) }
      : {}),
    ...(process.env.BENCH_PG_WRITE_BATCH_CALLS
      ? { writeBatchCalls: Number(process.env.BENCH_PG_WRITE_BATCH_CALLS) }
      : {}),
  }),
  role,
  inlineBudgetMs: 60_000,
});
await runtime.ready;

serve({
  async call(i, madeAt) {
    const args = madeAt === undefined ? { i } : { i, madeAt };
    const reply = await runtime.call({ name: 'add_one', args, sessionId: `s${i % 16}` }).catch((error) => {
      throw error?.code === 'persistence_failed' ? Object.assign(error, { refused: true }) : error;
    });
    if (reply.output === i + 1) return;
    const error = new Error(`call ${i} answered ${JSON.stringify(reply)}`);
    // Gone to the background (no worker claimed it in time: the store was away, say): its end
    // comes as a notification, which the long run counts apart from a failure.
    if (reply.status === 'backgrounded') throw Object.assign(error, { backgrounded: true });
    // Refused, with nothing kept: more calls waiting for workers than a client holds, or the store
    // away past the ride-out. The caller is told to come back later, which the long run counts apart.
    const code = reply.error?.code;
    throw code === 'overloaded' || code === 'persistence_failed'
      ? Object.assign(error, { refused: true })
      : error;
  },
  stop: () => runtime.close(),
});
