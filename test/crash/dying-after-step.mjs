// Runs one call of the two-step tool on a SQLite file; says so once step one is stored, then
// waits to be killed.
import { createRuntime } from '@baton/runtime';
import { sqliteStore } from '@baton/store-sqlite';
import { twoStepTool } from './step-tools.mjs';

const [path, runLog] = process.argv.slice(2);
const stepOneStored = () => {
  process.stdout.write('step one stored\n');
  return new Promise(() => {});
};
const runtime = createRuntime({ tools: [twoStepTool(runLog, stepOneStored)], store: sqliteStore({ path }) });
await runtime.ready;
void runtime.call({ name: 'two_steps', sessionId: 's', callId: 'steps_1' });
setInterval(() => {}, 60_000);
