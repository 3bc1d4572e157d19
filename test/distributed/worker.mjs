// A worker process: runs the calls that clients put in PostgreSQL. It prints `ready` once it
// works, then `<callId> <event> <attempt?>` for each event of its calls once stored (a fenced write
// is "stored" too: it committed, changing nothing).
import { createRuntime } from '@baton/runtime';
import { postgresStore } from '@baton/store-postgres';
import { distributedTools } from './tools.mjs';

const { BATON_PG_URL, BATON_PG_SCHEMA, LEASE_MS = '1000', POLL_MS = '200', CONCURRENCY = '64' } = process.env;
const runtime = createRuntime({
  tools: distributedTools,
  store: postgresStore({ connectionString: BATON_PG_URL, schema: BATON_PG_SCHEMA, maxConnections: 4 }),
  role: 'worker',
  leaseMs: Number(LEASE_MS),
  pollMs: Number(POLL_MS),
  limits: { concurrency: Number(CONCURRENCY) },
});
runtime.events$.subscribe((event) => {
  const attempt = event.type === 'started' ? ` ${event.attempt}` : '';
  process.stdout.write(`${event.callId} ${event.type}${attempt}\n`);
});
await runtime.ready;
process.stdout.write(`ready ${runtime.instanceId}\n`);
process.once('SIGTERM', async () => {
  await runtime.close();
  process.exit(0);
});
