// Starts one call of the steered tool, sends it a message it reads and one it has not read yet,
// says so once both are stored, then waits to be killed.
import { createRuntime } from '@baton/runtime';
import { steeredTool } from './steered-tools.mjs';
import { openStore } from './stores.mjs';

const [location, readLog] = process.argv.slice(2);
let firstRead;
const readOne = new Promise((resolve) => {
  firstRead = resolve;
});
const stalls = () => {
  firstRead();
  return new Promise(() => {});
};
const runtime = createRuntime({ tools: [steeredTool(readLog, stalls)], store: openStore(location) });
await runtime.ready;
const { callId } = await runtime.call({ name: 'steered', sessionId: 's', callId: 'steered_1' });
await runtime.steer(callId, 'moon');
await readOne;
await runtime.steer(callId, 'sun');
process.stdout.write('both stored\n');
setInterval(() => {}, 60_000);
