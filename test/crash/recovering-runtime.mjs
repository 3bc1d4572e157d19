// The process that comes after the one the crash test killed: it opens the same SQLite file,
// recovers what it finds, runs it to the end, closes, and says how each run went (one JSON line).
import { createRuntime } from '@baton/runtime';
import { openStore } from './stores.mjs';
import { crashTools } from './tools.mjs';

const [path] = process.argv.slice(2);
const runs = [];
const runtime = createRuntime({
  tools: crashTools(({ n, attempt }) => {
    runs.push(`#${attempt}`);
    return { n, attempt };
  }),
  store: openStore(path),
});
await runtime.ready;
for (let turn = 0; turn < 10_000 && runtime.stats().active > 0; turn++) {
  await new Promise((resolve) => setImmediate(resolve));
}
await runtime.close();
process.stdout.write(`${JSON.stringify({ pid: process.pid, runs })}\n`);
