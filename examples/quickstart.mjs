// The README's example, runnable: `npm run example` (it sets up a fresh clone first).
import { defineTool, ToolError } from '@baton/contracts';
import { createRuntime } from '@baton/runtime';
import { z } from 'zod';

const searchDocs = defineTool({
  name: 'search_docs',
  description: 'Search the docs',
  input: z.object({ query: z.string() }),
  execution: { mode: 'auto', timeoutMs: 60_000 },
  async execute({ query }, ctx) {
    ctx.progress({ current: 1, total: 1, unit: 'page' });
    if (query === '') throw new ToolError('Give me something to search for');
    await new Promise((resolve) => setTimeout(resolve, query === 'slow' ? 1_000 : 10));
    return { hits: [`${query}: see chapter 3`] };
  },
});

const runtime = createRuntime({ tools: [searchDocs] });
console.log(await runtime.call({ name: 'search_docs', args: { query: 'budgets' }, sessionId: 's1' }));
console.log(await runtime.call({ name: 'search_docs', args: { query: 'slow' }, sessionId: 's1' }));
const finished = new Promise((resolve) =>
  runtime.events$.subscribe((event) => event.type === 'notification' && resolve()),
);
await finished;
console.log(await runtime.notifications.list({ sessionId: 's1' }));
await runtime.close();
