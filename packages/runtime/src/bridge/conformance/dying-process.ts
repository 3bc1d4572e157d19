/**
 * The process the delivery suite SIGKILLs: a runtime on the suite's SQLite file that leaves a
 * session's result where the scenario says, prints `ready`, and waits to be killed.
 * - `held`: a background call's end is held for this process (a loop gave it to its model, whose
 *   step never finished), not acknowledged.
 * - `told`: a call in the background has told its session an update and a reminder (`notifyAfterMs`),
 *   neither given yet, and still runs.
 *
 * Run as `node dying-process.js <path> <scenario> <sessionId>`; it opens the store with
 * `@baton/store-sqlite`, which the suite's users have beside it (the suite's `sqliteStore` is theirs).
 */
import { isTerminalStatus } from '@baton/contracts';
import {
  DYING_CALL,
  type DyingScenario,
  REMINDED_AFTER_MS,
  SUITE_BUDGET_MS,
  suiteRuntime,
} from './suite-runtime.js';

const [path, scenario, sessionId] = process.argv.slice(2) as [string, DyingScenario, string];
// Named at run time, so that the build leaves it to the user's install (it is not the runtime's).
const storePackage = '@baton/store-sqlite';
const { sqliteStore } = (await import(storePackage)) as typeof import('@baton/store-sqlite');
const suite = suiteRuntime({ store: sqliteStore({ path }) });
const { runtime, clock } = suite;
await runtime.ready;
const { callId, tool, topic } = DYING_CALL[scenario];
const queued = async () => runtime.notifications.list({ sessionId, status: 'queued' });
const until = async (check: () => Promise<boolean>) => {
  while (!(await check())) await new Promise((resolve) => setTimeout(resolve, 5));
};

const promoted = suite.promoteWhenStarted(callId);
const replying = runtime.call({
  name: tool,
  args: { topic },
  sessionId,
  callId,
  ...(scenario === 'told' ? { notifyAfterMs: [REMINDED_AFTER_MS] } : {}),
});
await promoted;
await replying;
if (scenario === 'held') {
  suite.end(topic);
  await until(async () => isTerminalStatus((await runtime.get(callId))?.status ?? 'queued'));
  await suite.notified(callId, sessionId);
  const held = await runtime.notifications.hold({ sessionId, idle: true });
  if (held.length !== 1) throw new Error(`held ${held.length} results, not 1`);
} else {
  suite.report(topic);
  await until(async () => (await queued()).length === 1);
  clock.increment(REMINDED_AFTER_MS - SUITE_BUDGET_MS);
  await until(async () => (await queued()).length === 2);
}
process.stdout.write('ready\n');
setInterval(() => {}, 60_000);
