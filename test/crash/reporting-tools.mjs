// A tool that tells its session how far it is, shared by the process that dies and the one that
// takes its call up: the first attempt sends an update and never ends; the next one ends.
import { defineTool } from '@baton/contracts';
import { z } from 'zod';

export function reportingTool() {
  return defineTool({
    name: 'build',
    description: 'Builds the project and says how far it is',
    input: z.object({}),
    execution: { idempotent: true, mode: 'background' },
    async execute(_, ctx) {
      if (ctx.attempt > 1) return 'built';
      ctx.update('compiled 12 of 40 files');
      return new Promise(() => {});
    },
  });
}
