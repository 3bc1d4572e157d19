// The process the at-most-once test kills. Concurrency 1: `hold` takes the slot and `charge`, a
// tool that is not idempotent, waits behind it; once `hold` ends, `charge` starts, and blocks.
import { createRuntime } from '@baton/runtime';
import { chargingTools } from './charging-tools.mjs';
import { openStore } from './stores.mjs';

const [path, sideEffects] = process.argv.slice(2);
const runtime = createRuntime({
  tools: chargingTools(sideEffects, 60_000),
  store: openStore(path),
  limits: { concurrency: 1 },
});
await runtime.ready;
void runtime.call({ name: 'hold', sessionId: 's', callId: 'hold' });
void runtime.call({ name: 'charge', sessionId: 's', callId: 'charge' });
process.stdout.write('submitted\n');
setInterval(() => {}, 60_000);
