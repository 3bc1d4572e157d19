// Your own tools, served: `npx baton serve examples/tools.mjs` (in a clone set up with `npm ci`).
import { defineTool, ToolError } from '@baton/contracts';
import { z } from 'zod';

export const weather = defineTool({
  name: 'weather',
  description: 'The weather in a city',
  input: z.object({ city: z.string() }),
  execute: ({ city }) => ({ city, sky: 'clear', celsius: 21 }),
});

export const report = defineTool({
  name: 'report',
  description: 'A slow report: past the inline budget it goes on in the background',
  input: z.object({ topic: z.string() }),
  execution: { mode: 'auto' },
  async execute({ topic }, ctx) {
    if (topic === '') throw new ToolError('Name a topic');
    for (let page = 1; page <= 3; page++) {
      ctx.progress({ current: page, total: 3, unit: 'page' });
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
    return { topic, pages: 3 };
  },
});
