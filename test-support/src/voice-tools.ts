import { defineTool, type Scheduling, ToolError } from '@baton/contracts';
import { createRuntime, type Runtime } from '@baton/runtime';
import { deferred, memoryStore, SimulatedClock } from '@baton/runtime/testing';
import { z } from 'zod';

/** The inline budget of the voice bridges' tests. */
export const VOICE_BUDGET_MS = 300;

/**
 * A runtime for a voice bridge's tests, on a simulated clock: `research_<scheduling>` for each
 * result scheduling (slow: each ends when its topic's gate is opened, or when cancelled), and
 * `look_up` (fast; the word "nothing" is a tool error).
 */
export function voiceRuntime(): {
  runtime: Runtime;
  clock: SimulatedClock;
  gateOf: (topic: string) => { promise: Promise<string>; resolve(value: string): void };
} {
  const gates = new Map<string, ReturnType<typeof deferred<string>>>();
  const gateOf = (topic: string) => {
    const gate = gates.get(topic) ?? deferred<string>();
    gates.set(topic, gate);
    return gate;
  };
  const research = (scheduling: Scheduling) =>
    defineTool({
      name: `research_${scheduling}`,
      description: 'Researches a topic; takes minutes',
      input: z.object({ topic: z.string() }),
      execution: { mode: 'auto', scheduling },
      async execute({ topic }, ctx) {
        const gate = gateOf(topic);
        ctx.signal.addEventListener('abort', () => gate.resolve('(aborted)'));
        return `${topic}: ${await gate.promise}`;
      },
    });
  const lookUp = defineTool({
    name: 'look_up',
    description: 'Looks a word up',
    input: z.object({ word: z.string() }),
    execute: ({ word }) => {
      if (word === 'nothing') throw new ToolError(`No entry for "${word}".`);
      return { word, meaning: 'a greeting' };
    },
  });
  const clock = new SimulatedClock();
  const runtime = createRuntime({
    tools: [research('interrupt'), research('when_idle'), research('silent'), lookUp],
    store: memoryStore(),
    clock,
    inlineBudgetMs: VOICE_BUDGET_MS,
  });
  return { runtime, clock, gateOf };
}
