// The tools of the deployment and outage tests, served by `baton serve --role client` and run by
// `baton worker`. Each run appends a line to $RUNS_LOG: the tool, the call, the process, and the
// moment it began (ms since the epoch).
import { appendFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { defineTool, ToolError } from '@baton/contracts';

const input = {
  type: 'object',
  properties: { n: { type: 'integer' }, ms: { type: 'integer', minimum: 0 } },
  required: ['n', 'ms'],
};
const ran = (tool, ctx) =>
  appendFileSync(process.env.RUNS_LOG, `${tool} ${ctx.callId} ${process.pid} ${Date.now()}\n`);

/** Safe to run again: a crash or a handover runs it once more. */
export const work = defineTool({
  name: 'work',
  description: 'Works for a while; safe to run again',
  input,
  execution: { mode: 'auto', idempotent: true },
  async execute({ n, ms }, ctx) {
    ran('work', ctx);
    await sleep(ms, undefined, { signal: ctx.signal });
    return { worked: n };
  },
});

/** Not safe to run again: a crash or a handover ends it `interrupted` instead. */
export const charge = defineTool({
  name: 'charge',
  description: 'Charges a card, slowly; must not run twice',
  input,
  execution: { mode: 'auto', idempotent: false },
  async execute({ n, ms }, ctx) {
    ran('charge', ctx);
    await sleep(ms, undefined, { signal: ctx.signal });
    return { charged: n };
  },
});

/** Fails, as a tool does: the model reads why. */
export const refuse = defineTool({
  name: 'refuse',
  description: 'Refuses, after a while',
  input,
  execution: { mode: 'auto', idempotent: false },
  async execute({ n, ms }, ctx) {
    ran('refuse', ctx);
    await sleep(ms, undefined, { signal: ctx.signal });
    throw new ToolError(`refused ${n}`);
  },
});
