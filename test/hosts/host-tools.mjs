// The tools of the host suite, served by `baton serve` to a real host (Claude Code, ...): one that
// answers at once, and one slow enough to go to the background. Each answers with a mark made of
// what it was asked, which the suite counts in what the model was shown.
import { setTimeout as sleep } from 'node:timers/promises';
import { defineTool } from '@baton/contracts';

const input = {
  type: 'object',
  properties: { topic: { type: 'string', description: 'What to look up' } },
  required: ['topic'],
};

export const quick_lookup = defineTool({
  name: 'quick_lookup',
  description: 'Looks a topic up at once',
  input,
  execution: { mode: 'inline' },
  execute: async ({ topic }) => `found-${topic}`,
});

export const slow_lookup = defineTool({
  name: 'slow_lookup',
  description: 'Looks a topic up; takes a few seconds',
  input,
  // Safe to run again: a call a restart of Baton handed over runs again at its next start.
  execution: { mode: 'auto', idempotent: true },
  async execute({ topic }, ctx) {
    await sleep(Number(process.env.SLOW_LOOKUP_MS ?? 2_000), undefined, { signal: ctx.signal });
    return `found-${topic}`;
  },
});
