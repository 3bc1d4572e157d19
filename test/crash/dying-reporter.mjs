// Starts a build that sends an update and is reminded of after 200 ms (`notifyAfterMs`), says so
// once both are queued notifications of its session, then waits to be killed.
import { createRuntime } from '@baton/runtime';
import { reportingTool } from './reporting-tools.mjs';
import { openStore } from './stores.mjs';

const [location] = process.argv.slice(2);
const runtime = createRuntime({ tools: [reportingTool()], store: openStore(location) });
await runtime.ready;
await runtime.call({ name: 'build', args: {}, sessionId: 's', callId: 'build_1', notifyAfterMs: [200] });
for (;;) {
  const queued = await runtime.notifications.list({ sessionId: 's', status: 'queued' });
  if (queued.length === 2) break;
  await new Promise((resolve) => setTimeout(resolve, 10));
}
process.stdout.write('update and reminder queued\n');
setInterval(() => {}, 60_000);
