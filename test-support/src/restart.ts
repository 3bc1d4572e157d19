import { setTimeout as sleep } from 'node:timers/promises';
import { defineTool } from '@baton/contracts';
import { createRuntime, type Runtime, type RuntimeOptions } from '@baton/runtime';
import { SimulatedClock } from '@baton/runtime/testing';
import { sqliteStore } from '@baton/store-sqlite';
import { filter, firstValueFrom } from 'rxjs';
import { z } from 'zod';

/** The inline budget of the bridges' restart tests. */
export const RESTART_BUDGET_MS = 300;

/**
 * A process's runtime on the SQLite file at `path`, on a simulated clock, with `research`
 * (idempotent, `auto`): it hangs in the first process (`hangs`) and answers `<topic>: high at noon`
 * in the next, which recovers the call and runs it again; with the test's own options (its webhooks).
 */
export function restartingRuntime(
  path: string,
  hangs: boolean,
  options: Pick<RuntimeOptions, 'webhooks'> = {},
): { runtime: Runtime; clock: SimulatedClock } {
  const research = defineTool({
    name: 'research',
    description: 'Researches a topic; takes minutes',
    input: z.object({ topic: z.string() }),
    execution: { mode: 'auto', idempotent: true },
    execute: ({ topic }) => (hangs ? new Promise<string>(() => {}) : `${topic}: high at noon`),
  });
  const clock = new SimulatedClock();
  const runtime = createRuntime({
    tools: [research],
    store: sqliteStore({ path }),
    clock,
    inlineBudgetMs: RESTART_BUDGET_MS,
    ...options,
  });
  return { runtime, clock };
}

/**
 * Resolves once the next runtime has recovered the session's call and its end is a notification:
 * the first one's lease must lapse (in a test's process, whose PID is still alive, the lease is
 * what tells), so its clock goes on a second at each look, and the looks leave the SQLite writer's
 * thread time to answer. Rejects after `timeoutMs` of real time.
 */
export async function recoveredAndNotified(
  { runtime, clock }: { runtime: Runtime; clock: SimulatedClock },
  sessionId: string,
  timeoutMs = 20_000,
): Promise<void> {
  let noticed = false;
  const notice = firstValueFrom(
    runtime.follow({ sessionId }).pipe(filter(({ event }) => event.type === 'notification')),
  ).then(() => {
    noticed = true;
  });
  await runtime.ready;
  const deadline = Date.now() + timeoutMs;
  while (!noticed) {
    if (Date.now() > deadline)
      throw new Error(`no notification in session ${sessionId} after ${timeoutMs} ms`);
    clock.increment(1_000);
    await sleep(10);
  }
  await notice;
}
