// A process of the PostgreSQL measure, in the role ROLE (`client`, `worker` or `both`) on one schema.
// It counts its database queries (every query of a pg client, the store's included) and its CPU.
// Lines on stdin drive it:
//   `run <calls> <inFlight> <offset>` (a client, or both): makes the calls, prints `done`;
//   `report`: prints `report <cpu µs> <queries>` since the last report.
// It prints `ready` once it takes work, and stops on SIGTERM.
import { createInterface } from 'node:readline';
import { defineTool } from '@baton/contracts';
import { createRuntime } from '@baton/runtime';
import { postgresStore } from '@baton/store-postgres';
import pg from 'pg';
import { z } from 'zod';

let queries = 0;
const query = pg.Client.prototype.query;
pg.Client.prototype.query = function countedQuery(...args) {
  queries++;
  return query.apply(this, args);
};

const role = ['client', 'worker', 'both'].includes(process.env.ROLE) ? process.env.ROLE : 'worker';
const runtime = createRuntime({
  tools: [
    defineTool({
      name: 'add_one',
      description: 'adds one',
      input: z.object({ i: z.number() }),
      execute: async ({ i }) => i + 1,
    }),
  ],
  store: postgresStore({
    connectionString: process.env.BATON_PG_URL,
    schema: process.env.BATON_PG_SCHEMA,
    maxConnections: 10,
    // Pipelined writes: BENCH_PG_WRITE_CONCURRENCY=4 has up to 4 batches in flight (default 1).
    ...(process.env.BENCH_PG_WRITE_CONCURRENCY
      ? { writeConcurrency: Number(process.env.BENCH_PG_WRITE_CONCURRENCY) }
      : {}),
  }),
  role,
  inlineBudgetMs: 60_000,
});
await runtime.ready;

let cpu = process.cpuUsage();
let counted = queries;
async function run(calls, inFlight, offset) {
  let next = 0;
  const lane = async () => {
    while (next < calls) {
      const i = offset + next++;
      const reply = await runtime.call({ name: 'add_one', args: { i }, sessionId: `s${i % 16}` });
      if (reply.output !== i + 1) throw new Error(`call ${i} answered ${JSON.stringify(reply)}`);
    }
  };
  await Promise.all(Array.from({ length: Math.min(inFlight, calls) }, lane));
}

createInterface({ input: process.stdin }).on('line', (line) => {
  const [command, ...args] = line.split(' ');
  if (command === 'run') {
    const [calls, inFlight, offset] = args.map(Number);
    run(calls, inFlight, offset).then(
      () => process.stdout.write('done\n'),
      (error) => {
        process.stderr.write(`${error.stack}\n`);
        process.exit(1);
      },
    );
  } else if (command === 'report') {
    const used = process.cpuUsage(cpu);
    process.stdout.write(`report ${used.user + used.system} ${queries - counted}\n`);
    cpu = process.cpuUsage();
    counted = queries;
  }
});
process.stdout.write('ready\n');
process.once('SIGTERM', async () => {
  await runtime.close();
  process.exit(0);
});
