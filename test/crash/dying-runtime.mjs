// The process the crash test kills: it runs calls on a SQLite file and reports on stdout, one JSON
// line each, every call the store has accepted and every call that went to the background.
import { createRuntime } from '@baton/runtime';
import { openStore } from './stores.mjs';
import { crashTools, TOOL_NAMES } from './tools.mjs';

const [path, perTool] = process.argv.slice(2);
const runtime = createRuntime({
  tools: crashTools(() => new Promise(() => {})),
  store: openStore(path),
  inlineBudgetMs: 50,
});
const say = (message) => process.stdout.write(`${JSON.stringify(message)}\n`);
// Events reach the bus only once they are stored: a `queued` event means the call is accepted.
runtime.events$.subscribe((event) => {
  if (event.type === 'queued') say({ accepted: event.callId, tool: event.toolName });
  if (event.type === 'started') say({ started: event.callId });
  if (event.type === 'backgrounded') say({ backgrounded: event.callId });
});
await runtime.ready;
say({ pid: process.pid });
for (let n = 0; n < Number(perTool); n++) {
  for (const name of TOOL_NAMES) void runtime.call({ name, args: { n }, sessionId: `session-${n % 3}` });
}
say({ submitted: Number(perTool) * TOOL_NAMES.length });
// Like a server, it stays up until it is killed.
setInterval(() => {}, 60_000);
