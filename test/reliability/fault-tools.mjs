// The tools of the combined-fault suite: the deployment tools, and one a caller steers, which
// tells an update of each message it reads. Each run appends a line to $RUNS_LOG; each message the
// steered tool reads, a line to $READS_LOG.
import { appendFileSync } from 'node:fs';
import { defineTool } from '@baton/contracts';

export { charge, refuse, work } from '../distributed/deployment-tools.mjs';

/** Reads messages until it is told to finish; safe to run again (a run again reads only the unread). */
export const steered = defineTool({
  name: 'steered',
  description: 'Reads the messages it is sent until one says finish, telling each; safe to run again',
  input: {
    type: 'object',
    properties: { n: { type: 'integer' }, ms: { type: 'integer', minimum: 0 } },
    required: ['n', 'ms'],
  },
  messages: { type: 'string' },
  execution: { mode: 'auto', idempotent: true },
  async execute({ n }, ctx) {
    appendFileSync(process.env.RUNS_LOG, `steered ${ctx.callId} ${process.pid} ${Date.now()}\n`);
    for (;;) {
      const message = await ctx.nextMessage();
      appendFileSync(process.env.READS_LOG, `${ctx.callId} ${message} ${process.pid}\n`);
      if (message === 'finish') return { steered: n };
      ctx.update(`read ${message}`);
    }
  },
});
