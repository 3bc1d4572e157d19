// The tools of the crash test, shared by the process that dies and the one that recovers.
// `settle` decides what a run does: the dying process never finishes a run; the recovering one
// finishes at once.
import { defineTool } from '@baton/contracts';
import { z } from 'zod';

export const TOOL_NAMES = ['safe_auto', 'unsafe_auto', 'safe_inline', 'unsafe_inline'];

export function crashTools(settle) {
  return TOOL_NAMES.map((name) =>
    defineTool({
      name,
      description: name,
      input: z.object({ n: z.number() }),
      execution: { mode: name.endsWith('auto') ? 'auto' : 'inline', idempotent: name.startsWith('safe') },
      execute: ({ n }, ctx) => settle({ n, attempt: ctx.attempt, pid: process.pid }),
    }),
  );
}
