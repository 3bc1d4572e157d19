import { setTimeout as sleep } from 'node:timers/promises';
import { defineTool, ToolError } from '@baton/contracts';
import { z } from 'zod';

/** Tools registered by the reference server, so that a new user sees every path of a call. */
export const demoTools = [
  defineTool({
    name: 'echo',
    title: 'Echo',
    description: 'Returns its text at once (an inline call).',
    input: z.object({ text: z.string() }),
    execution: { readOnly: true, idempotent: true },
    execute: ({ text }) => ({ text }),
  }),
  defineTool({
    name: 'slow_report',
    title: 'Slow report',
    description:
      'Works for a few seconds, reporting progress: it goes to the background after the inline budget.',
    input: z.object({ seconds: z.number().int().min(1).max(60).default(3) }),
    execution: { mode: 'auto', timeoutMs: 120_000 },
    async execute({ seconds }, ctx) {
      for (let second = 1; second <= seconds; second++) {
        await sleep(1_000, undefined, { signal: ctx.signal });
        ctx.progress({ current: second, total: seconds, unit: 'second' });
      }
      return { report: `done after ${seconds} s` };
    },
  }),
  defineTool({
    name: 'always_fails',
    title: 'Always fails',
    description: 'Fails with an error the model sees.',
    input: z.object({}),
    execute: () => {
      throw new ToolError('this tool always fails');
    },
  }),
  defineTool({
    name: 'has_a_bug',
    title: 'Has a bug',
    description:
      'Throws an unexpected error: the model is told only that an internal error occurred; the log and the inspector show its message and stack.',
    input: z.object({}),
    execute: (): never => {
      throw new TypeError("Cannot read properties of undefined (reading 'rows')");
    },
  }),
  defineTool({
    name: 'deploy',
    title: 'Deploy',
    description: 'Needs approval before it runs.',
    input: z.object({
      env: z.enum(['staging', 'production']),
      // A secret argument: the API, the inspector and the logs show it redacted.
      deployKey: z.string().meta({ writeOnly: true }).optional().describe('The key to deploy with'),
    }),
    execution: { needsApproval: true },
    execute: ({ env }) => ({ deployed: env }),
  }),
];
