// A tool with two durable steps, shared by the process that dies after step one and the one that
// recovers. Each step appends its name to a file, so runs are counted across both processes.
import { appendFileSync } from 'node:fs';
import { defineTool } from '@baton/contracts';
import { z } from 'zod';

export function twoStepTool(runLog, afterStepOne) {
  return defineTool({
    name: 'two_steps',
    description: 'two durable steps',
    input: z.object({}),
    execution: { idempotent: true },
    async execute(_, ctx) {
      const first = await ctx.step('one', () => {
        appendFileSync(runLog, 'one\n');
        return { fetched: 42 };
      });
      await afterStepOne();
      const second = await ctx.step('two', () => {
        appendFileSync(runLog, 'two\n');
        return first.fetched + 1;
      });
      return { first, second, attempt: ctx.attempt };
    },
  });
}
