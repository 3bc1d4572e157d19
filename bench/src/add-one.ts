import { defineTool } from '@baton/contracts';
import type { Runtime } from '@baton/runtime';
import { z } from 'zod';

/** The trivial tool's work: what Baton adds to it is what the bench measures. */
export async function addOne({ i }: { i: number }): Promise<number> {
  return i + 1;
}

/**
 * The bench's tool, `add_one`: idempotent, as adding one is, so it runs at once (a tool that is not
 * runs only once its start is stored, on a store that outlives the process).
 */
export const addOneTool = defineTool({
  name: 'add_one',
  description: 'adds one',
  input: z.object({ i: z.number() }),
  execution: { idempotent: true },
  execute: addOne,
});

/** Call number `i` of a measure, in one of 16 sessions. */
export function callAddOne(runtime: Runtime, i: number) {
  return runtime.call({ name: 'add_one', args: { i }, sessionId: `s${i % 16}` });
}

/** `add_one` as a tool that is not idempotent: on a store that outlives the process it runs once its start is stored. */
export const addOnceTool = defineTool({
  name: 'add_once',
  description: 'adds one, and must not run twice',
  input: z.object({ i: z.number() }),
  execute: addOne,
});
