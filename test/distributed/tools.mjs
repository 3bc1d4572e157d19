// The tools of the distributed tests, shared by the worker processes (which run them) and the
// client (which validates calls against them and never runs them). A plain ES module.
import { setTimeout as sleep } from 'node:timers/promises';
import { defineTool } from '@baton/contracts';
import { z } from 'zod';

/** The worker's name, in every result: which process ran the call. */
const by = () => process.env.WORKER_NAME ?? 'client';

export const distributedTools = [
  defineTool({
    name: 'echo',
    description: 'Answers at once',
    input: z.object({ text: z.string() }),
    execution: { idempotent: true },
    execute: ({ text }) => ({ text, by: by() }),
  }),
  defineTool({
    name: 'sleepy',
    description: 'Sleeps, then answers; safe to run again',
    input: z.object({ ms: z.number().int().min(0) }),
    execution: { mode: 'auto', idempotent: true },
    async execute({ ms }, ctx) {
      ctx.progress({ current: 0, total: ms, unit: 'ms' });
      await sleep(ms, undefined, { signal: ctx.signal });
      return { slept: ms, by: by() };
    },
  }),
  defineTool({
    name: 'once',
    description: 'Sleeps, then answers; must not run twice',
    input: z.object({ ms: z.number().int().min(0) }),
    execution: { mode: 'auto', idempotent: false },
    async execute({ ms }, ctx) {
      await sleep(ms, undefined, { signal: ctx.signal });
      return { slept: ms, by: by() };
    },
  }),
  defineTool({
    name: 'chatty',
    description: 'Reports progress a thousand times, then answers',
    input: z.object({}),
    // A budget no loaded machine reaches: the call's state changes do not depend on timing.
    execution: { mode: 'auto', idempotent: true, inlineBudgetMs: 60_000 },
    async execute(_, ctx) {
      for (let step = 1; step <= 1_000; step++) ctx.progress({ current: step, total: 1_000 });
      await sleep(50);
      return { by: by() };
    },
  }),
  defineTool({
    name: 'noted',
    description: 'Runs in the background and answers at once: its end is a notification',
    input: z.object({ n: z.number().int() }),
    execution: { mode: 'background', idempotent: true },
    execute: ({ n }) => ({ n, by: by() }),
  }),
  defineTool({
    name: 'guarded',
    description: 'Runs once a person approves it',
    input: z.object({}),
    execution: { needsApproval: true },
    execute: () => ({ approved: true, by: by() }),
  }),
];
