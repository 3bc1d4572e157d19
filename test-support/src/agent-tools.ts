import { type AnyTool, defineTool } from '@baton/contracts';
import { createRuntime, type Runtime, type RuntimeOptions } from '@baton/runtime';
import { type Deferred, deferred, memoryStore, SimulatedClock } from '@baton/runtime/testing';
import { z } from 'zod';

/** The inline budget of the bridges' agent-loop tests. */
export const AGENT_BUDGET_MS = 300;

/** The gate of a topic: the test ends the research of that topic by hand. */
export type GateOf = (topic: string) => Deferred<string>;

/**
 * A runtime for a bridge's agent-loop tests, in memory, on a simulated clock, with the tools those
 * tests share: `research` (auto, idempotent: it ends when its topic's gate is opened), `look_up`
 * (fast) and `delete_file` (it waits for an approval); and any of the test's own, which may use
 * the same gates; and the test's own options (its webhooks, say).
 */
export function agentLoopRuntime(
  own: (gateOf: GateOf) => AnyTool[] = () => [],
  options: Pick<RuntimeOptions, 'webhooks'> = {},
): {
  runtime: Runtime;
  clock: SimulatedClock;
  gateOf: GateOf;
} {
  const gates = new Map<string, Deferred<string>>();
  const gateOf: GateOf = (topic) => {
    const gate = gates.get(topic) ?? deferred<string>();
    gates.set(topic, gate);
    return gate;
  };
  const clock = new SimulatedClock();
  const runtime = createRuntime({
    tools: [
      defineTool({
        name: 'research',
        description: 'Researches a topic; takes minutes',
        input: z.object({ topic: z.string() }),
        execution: { mode: 'auto', idempotent: true },
        execute: ({ topic }) => gateOf(topic).promise,
      }),
      defineTool({
        name: 'look_up',
        description: 'Looks a word up',
        input: z.object({ word: z.string() }),
        execute: ({ word }) => `${word}: a word`,
      }),
      defineTool({
        name: 'delete_file',
        description: 'Deletes a file',
        input: z.object({ path: z.string() }),
        execution: { needsApproval: true },
        execute: ({ path }) => `deleted ${path}`,
      }),
      ...own(gateOf),
    ] as AnyTool[],
    store: memoryStore(),
    clock,
    inlineBudgetMs: AGENT_BUDGET_MS,
    ...options,
  });
  return { runtime, clock, gateOf };
}
