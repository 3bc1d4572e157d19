// A tool that takes messages, shared by the process that dies and the one that recovers. Each
// message it reads is appended to a file with the attempt that read it, so reads are counted
// across both processes.
import { appendFileSync } from 'node:fs';
import { defineTool } from '@baton/contracts';
import { z } from 'zod';

export function steeredTool(readLog, afterFirstRead) {
  return defineTool({
    name: 'steered',
    description: 'Reads messages until it is told to finish',
    input: z.object({}),
    messages: z.string(),
    execution: { idempotent: true, mode: 'background' },
    async execute(_, ctx) {
      const read = [];
      for (;;) {
        const message = await ctx.nextMessage();
        appendFileSync(readLog, `${ctx.attempt} ${message}\n`);
        if (message === 'finish') return { read, attempt: ctx.attempt };
        read.push(message);
        if (read.length === 1) await afterFirstRead();
      }
    },
  });
}
