// A worker process: runs the calls that clients put in PostgreSQL. It prints `ready` once it
// works, then `<callId> <event> <attempt?>` for each event of its calls once stored (a fenced write
// is "stored" too: it committed, changing nothing). With SIGKILL_AT_RUNNING=n it kills itself
// (SIGKILL) once it has printed n calls started and not ended: mid-way for certain, where a kill
// sent by the test could land late, after a loaded machine let the worker finish everything.
// With WEBHOOK_URL it delivers notifications there, and prints `<deliveryId> webhook <attempts>
// <status>` for each attempt it made.
import { createRuntime } from '@baton/runtime';
import { postgresStore } from '@baton/store-postgres';
import { distributedTools } from './tools.mjs';

const {
  BATON_PG_URL,
  BATON_PG_SCHEMA,
  LEASE_MS = '1000',
  POLL_MS = '200',
  CONCURRENCY = '64',
  SIGKILL_AT_RUNNING,
  WEBHOOK_URL,
  WEBHOOK_SECRET,
  WEBHOOK_RETRY_MS = '100',
} = process.env;
const TERMINAL = new Set(['succeeded', 'failed', 'cancelled', 'timed_out']);
const runtime = createRuntime({
  tools: distributedTools,
  store: postgresStore({ connectionString: BATON_PG_URL, schema: BATON_PG_SCHEMA, maxConnections: 4 }),
  role: 'worker',
  leaseMs: Number(LEASE_MS),
  pollMs: Number(POLL_MS),
  limits: { concurrency: Number(CONCURRENCY) },
  ...(WEBHOOK_URL
    ? {
        webhooks: {
          endpoint: { url: WEBHOOK_URL, secret: WEBHOOK_SECRET },
          allow: { loopback: true },
          retryScheduleMs: [Number(WEBHOOK_RETRY_MS)],
          pollMs: Number(POLL_MS),
        },
      }
    : {}),
});
runtime.webhooks.attempts$.subscribe((delivery) =>
  process.stdout.write(`${delivery.id} webhook ${delivery.attempts} ${delivery.status}\n`),
);
const running = new Set();
runtime.events$.subscribe((event) => {
  const attempt = event.type === 'started' ? ` ${event.attempt}` : '';
  process.stdout.write(`${event.callId} ${event.type}${attempt}\n`);
  if (event.type === 'started') running.add(event.callId);
  else if (TERMINAL.has(event.type)) running.delete(event.callId);
  if (SIGKILL_AT_RUNNING && running.size >= Number(SIGKILL_AT_RUNNING)) process.kill(process.pid, 'SIGKILL');
});
await runtime.ready;
process.stdout.write(`ready ${runtime.instanceId}\n`);
process.once('SIGTERM', async () => {
  await runtime.close();
  process.exit(0);
});
