import { defineTool, ToolError } from '@baton/contracts';
import { z } from 'zod';

/** A gate a test opens: the call that waits on it runs until then. */
export function gate(): { opened: Promise<void>; open(): void } {
  let open = () => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

export const gates = new Map<string, ReturnType<typeof gate>>();

export const add = defineTool({
  name: 'add',
  description: 'Adds two numbers',
  input: z.object({ a: z.number(), b: z.number().default(1) }),
  execute: ({ a, b }) => ({ sum: a + b }),
});

export const slowReport = defineTool({
  name: 'slow_report',
  description: 'Writes a report once its gate opens, saying how far it is',
  input: z.object({ topic: z.string() }),
  execution: { mode: 'background' },
  async execute({ topic }, ctx) {
    const waiting = gates.get(topic) ?? gate();
    gates.set(topic, waiting);
    ctx.progress({ current: 1, total: 2, label: 'drafting' });
    await Promise.race([
      waiting.opened,
      new Promise((_, reject) => ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason))),
    ]);
    if (topic === 'nothing') throw new ToolError('nothing to report on');
    return `a report on ${topic}`;
  },
});

/** Collects the text it is sent until it is told `done`. */
export const notes = defineTool({
  name: 'notes',
  description: 'Takes notes sent to it until it is told "done"',
  input: z.object({}),
  messages: z.string().min(1),
  execution: { mode: 'background' },
  async execute(_args, ctx) {
    const taken: string[] = [];
    for (let note = await ctx.nextMessage(); note !== 'done'; note = await ctx.nextMessage())
      taken.push(note);
    return taken;
  },
});

export const tools = [add, slowReport, notes] as const;
