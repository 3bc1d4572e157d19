import { setTimeout as sleep } from 'node:timers/promises';
import { defineTool, ToolError } from '@baton/contracts';
import type { Store } from '@baton/store';
import { filter, firstValueFrom } from 'rxjs';
import { SimulatedClock } from 'xstate';
import { createRuntime } from '../../runtime.js';
import type { Runtime } from '../../runtime-api.js';
import type { BridgeConversation } from './driver.js';

/** A JSON Schema of an object with these required properties (the runtime's dist carries no zod). */
const objectOf = (properties: Record<string, 'string' | 'number'>) => ({
  type: 'object' as const,
  properties: Object.fromEntries(Object.entries(properties).map(([key, type]) => [key, { type }])),
  required: Object.keys(properties),
  additionalProperties: false,
});

/** The inline budget of the suite's runtimes. */
export const SUITE_BUDGET_MS = 300;

/** What each research tool answers for a topic: the text the suite looks for in what the model had. */
export const found = (topic: string) => `${topic}: found`;
/** What `research_reporting` tells of a topic half way. */
export const halfWay = (topic: string) => `${topic}: half way`;
/** What `research_stalling`'s first run returns, late, after it was stopped as stalled. */
export const stale = (topic: string) => `${topic}: stale`;
/** What `deploy` answers once it ran. */
export const deployed = (target: string) => `deployed ${target}`;
/** The words of a reminder that a call still runs (`notifyAfterMs`). */
export const STILL_RUNNING = 'Still running after';
/** How long `research_stalling` may give no sign of life. */
export const STALL_MS = 2_000;
/** How long a stalled run of `research_stalling` waits before its next attempt. */
const RETRY_MS = 100;

/** Where the process the suite kills leaves a session's result (see `dying-process.ts`). */
export type DyingScenario = 'held' | 'told';
/** What the killed process's call is, in each scenario. */
export const DYING_CALL: Record<DyingScenario, { callId: string; tool: string; topic: string }> = {
  held: { callId: 'call-held', tool: 'research_when_idle', topic: 'harbours' },
  told: { callId: 'call-told', tool: 'research_reporting', topic: 'currents' },
};
/** When the `told` call's session is reminded that it still runs. */
export const REMINDED_AFTER_MS = 1_000;

export interface SuiteRuntime {
  runtime: Runtime;
  clock: SimulatedClock;
  /** Ends the research of `topic` (its result is `found(topic)`). */
  end(topic: string): void;
  /** Has `research_reporting` of `topic` send its update, `halfWay(topic)`. */
  report(topic: string): void;
  /** Moves the clock past the budget as soon as the call `callId` has started. */
  promoteWhenStarted(callId: string): Promise<void>;
  /**
   * `research_stalling`'s first run of `callId` gives no sign of life for `STALL_MS` and is tried
   * again; resolves once the second run started. The first returns `stale(topic)` later, when its
   * topic ends.
   */
  stallAndRetry(callId: string): Promise<void>;
  /** Resolves once the call `callId`'s end is a notification of `sessionId` in the store. */
  notified(callId: string, sessionId: string): Promise<void>;
  /** The same in a runtime that takes over another's calls: resolves once it recovered and ended `callId`. */
  recovered(callId: string, sessionId: string): Promise<void>;
}

/**
 * The suite's runtime, on a simulated clock: `look_up` (inline and fast; "nothing" is a tool
 * error), `research_interrupt`, `research_when_idle` and `research_silent` (`auto`, each run ends
 * when the suite ends its topic, or never when `hangs`), `research_steered` (`auto`, ends when it
 * is told where to look), `research_reporting` (`auto`, sends an update when told to), `transfer` (inline, needs
 * approval), `deploy` (`auto`, needs approval, ends when the suite ends `deploy:<target>`),
 * `research_stalling` (`auto`, its first run stalls and is tried again), and the builtin
 * `steer_background`.
 */
export function suiteRuntime({
  store,
  hangs = false,
}: {
  store?: Store;
  hangs?: boolean;
} = {}): SuiteRuntime {
  const gates = new Map<string, { promise: Promise<void>; resolve: () => void }>();
  const gateOf = (topic: string) => {
    let gate = gates.get(topic);
    if (gate === undefined) {
      let resolve = () => {};
      const promise = new Promise<void>((done) => {
        resolve = done;
      });
      gate = { promise, resolve };
      gates.set(topic, gate);
    }
    return gate;
  };
  const research = (scheduling: 'interrupt' | 'when_idle' | 'silent') =>
    defineTool({
      name: `research_${scheduling}`,
      description: 'Researches a topic; takes minutes',
      input: objectOf({ topic: 'string' }),
      execution: { mode: 'auto', scheduling, idempotent: true },
      async execute(args, ctx) {
        const topic = String(args.topic);
        if (hangs) return new Promise<string>(() => {});
        await Promise.race([
          gateOf(topic).promise,
          new Promise((_, reject) => ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason))),
        ]);
        return found(topic);
      },
    });
  const lookUp = defineTool({
    name: 'look_up',
    description: 'Looks a word up',
    input: objectOf({ word: 'string' }),
    execute: (args) => {
      const word = String(args.word);
      if (word === 'nothing') throw new ToolError(`No entry for "${word}".`);
      return `${word}: a greeting`;
    },
  });
  const transfer = defineTool({
    name: 'transfer',
    description: 'Moves money; asks first',
    input: objectOf({ amount: 'number' }),
    execution: { needsApproval: true },
    execute: (args) => `transferred ${String(args.amount)}`,
  });
  const steered = defineTool({
    name: 'research_steered',
    description: 'Researches a topic where it is told to look (steer_background)',
    input: objectOf({ topic: 'string' }),
    messages: { type: 'string' },
    execution: { mode: 'auto', idempotent: true },
    async execute(args, ctx) {
      const where = await ctx.nextMessage();
      return found(`${String(args.topic)} at ${String(where)}`);
    },
  });
  const reporting = defineTool({
    name: 'research_reporting',
    description: 'Researches a topic, and tells what it found half way (an update)',
    input: objectOf({ topic: 'string' }),
    execution: { mode: 'auto', idempotent: true },
    async execute(args, ctx) {
      const topic = String(args.topic);
      await gateOf(`report:${topic}`).promise;
      ctx.update(halfWay(topic));
      await gateOf(topic).promise;
      return found(topic);
    },
  });
  const deploy = defineTool({
    name: 'deploy',
    description: 'Deploys a target; asks first, and takes minutes',
    input: objectOf({ target: 'string' }),
    execution: { mode: 'auto', needsApproval: true, idempotent: true },
    async execute(args) {
      const target = String(args.target);
      await gateOf(`deploy:${target}`).promise;
      return deployed(target);
    },
  });
  const stalling = defineTool({
    name: 'research_stalling',
    description: 'Researches a topic; its first run stalls',
    input: objectOf({ topic: 'string' }),
    execution: {
      mode: 'auto',
      idempotent: true,
      heartbeatTimeoutMs: STALL_MS,
      retry: { maxAttempts: 2, initialIntervalMs: RETRY_MS },
    },
    async execute(args, ctx) {
      const topic = String(args.topic);
      await gateOf(topic).promise;
      // The first run was stopped as stalled: what it returns now is not the call's.
      return ctx.attempt === 1 ? stale(topic) : found(topic);
    },
  });
  const clock = new SimulatedClock();
  const runtime = createRuntime({
    tools: [
      research('interrupt'),
      research('when_idle'),
      research('silent'),
      steered,
      reporting,
      lookUp,
      transfer,
      deploy,
      stalling,
    ],
    builtins: ['steer_background'],
    clock,
    inlineBudgetMs: SUITE_BUDGET_MS,
    ...(store ? { store } : {}),
  });
  return {
    runtime,
    clock,
    end: (topic) => gateOf(topic).resolve(),
    report: (topic) => gateOf(`report:${topic}`).resolve(),
    promoteWhenStarted: (callId) =>
      firstValueFrom(
        runtime.events$.pipe(filter((event) => event.type === 'started' && event.callId === callId)),
      ).then(() => clock.increment(SUITE_BUDGET_MS)),
    stallAndRetry: async (callId) => {
      const of = (type: string, attempt?: number) =>
        firstValueFrom(
          runtime.events$.pipe(
            filter(
              (event) =>
                event.callId === callId &&
                event.type === type &&
                (attempt === undefined || (event.type === 'started' && event.attempt === attempt)),
            ),
          ),
        );
      const retrying = of('retrying');
      const startedAgain = of('started', 2);
      clock.increment(STALL_MS);
      await retrying;
      clock.increment(RETRY_MS);
      await startedAgain;
    },
    notified: (callId, sessionId) =>
      eventually(
        async () =>
          (await runtime.notifications.list({ sessionId })).some(
            (notification) => notification.callId === callId && notification.outcome !== 'running',
          ),
        `the end of ${callId} is a notification`,
      ),
    recovered: async (callId, sessionId) => {
      // The first process's lease must lapse (in the test's process its PID is alive): its clock
      // goes on a second at each look, and the looks leave a store's thread time to answer.
      await runtime.ready;
      await eventually(async () => {
        clock.increment(1_000);
        return (await runtime.notifications.list({ sessionId })).some(
          (notification) => notification.callId === callId,
        );
      }, `the call ${callId} recovered and its end a notification`);
    },
  };
}

/** The Baton call id of a call the model made in `conversation` under `callId`. */
export const batonId = (conversation: Pick<BridgeConversation, 'batonCallId'>, callId: string) =>
  conversation.batonCallId?.(callId) ?? callId;

/** How many times `text` stands in `within`. */
export function timesIn(within: string | undefined, text: string): number {
  return within === undefined ? 0 : within.split(text).length - 1;
}

/** Resolves once `check` holds, looking every few milliseconds; rejects after `timeoutMs`. */
export async function eventually(check: () => Promise<boolean> | boolean, what: string, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not so after ${timeoutMs} ms: ${what}`);
    await sleep(5);
  }
}
