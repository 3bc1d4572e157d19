import {
  type AnyTool,
  type CallEvent,
  defineTool,
  type ExecutionOptions,
  type ToolContext,
} from '@baton/contracts';
import {
  type CallControl,
  type ClaimedCall,
  memoryStore,
  type NoticeTopic,
  type Store,
  type StoreNotice,
} from '@baton/store';
import { afterEach } from 'vitest';
import { z } from 'zod';
import { createRuntime, type Runtime, type RuntimeOptions } from '../src/index.js';
import { type Deferred, deferred, SimulatedClock } from '../src/testing.js';

const open: Runtime[] = [];

// Every runtime a test makes is closed when the test ends, whatever happened in it.
afterEach(async () => {
  await Promise.all(open.splice(0).map((runtime) => runtime.close()));
});

export interface TestRuntime {
  runtime: Runtime;
  clock: SimulatedClock;
  events: CallEvent[];
}

export function testRuntime(
  tools: AnyTool[],
  options: Omit<RuntimeOptions, 'tools' | 'clock'> = {},
): TestRuntime {
  const clock = new SimulatedClock();
  const runtime = createRuntime({ tools, clock, ...options });
  const events: CallEvent[] = [];
  runtime.events$.subscribe((event) => events.push(event));
  open.push(runtime);
  return { runtime, clock, events };
}

/** A tool whose every run waits for the test to finish it: `runs` holds one gate per run. */
export function gatedTool(name: string, execution: ExecutionOptions = {}) {
  const runs: Array<Deferred<unknown> & { signal: AbortSignal; args: unknown }> = [];
  const tool = defineTool({
    name,
    description: `${name}: waits for the test`,
    input: z.object({}).passthrough(),
    execution,
    execute(args, ctx) {
      const gate = deferred<unknown>();
      runs.push({ ...gate, signal: ctx.signal, args });
      return gate.promise;
    },
  });
  return { tool, runs };
}

/** A background tool `worker` that reports through its `ctx`, then waits until the test lets it finish with `result`. */
export function reportingTool(report: (ctx: ToolContext) => void, result: unknown = 'ok') {
  const step = deferred();
  const tool = defineTool({
    name: 'worker',
    description: 'w',
    input: z.object({}),
    execution: { mode: 'background' },
    async execute(_, ctx) {
      report(ctx);
      await step.promise;
      return result;
    },
  });
  return { tool, step };
}

/**
 * Lets pending promise callbacks, the writer's end-of-tick flush and the store's write run: a few
 * turns of the event loop, no time passing.
 */
export async function settle(): Promise<void> {
  for (let turn = 0; turn < 3; turn++) await new Promise((resolve) => setImmediate(resolve));
}

export function typesOf(events: CallEvent[], callId: string): string[] {
  return events.filter((event) => event.callId === callId).map((event) => event.type);
}

export { storedEvents } from '../src/testing.js';

/**
 * A memory store that says it is shared: it keeps the topics listened to now, and tells each
 * listener `listening` only when `answers` is true (as a store whose LISTEN connection is up).
 */
export function sharedStore({ answers }: { answers: boolean }) {
  const listened: NoticeTopic[] = [];
  const listeners = new Set<(notice: StoreNotice) => void>();
  const memory = memoryStore();
  // Requests are kept, as PostgreSQL keeps them; their notices are told only by `tell`.
  const sent: CallControl[] = [];
  const requestsFor = (callIds: readonly string[]) =>
    sent.filter((request) => callIds.includes(request.callId));
  const store: Store = Object.assign(Object.create(memory), {
    listen(listener: (notice: StoreNotice) => void, topic: NoticeTopic) {
      listened.push(topic);
      listeners.add(listener);
      if (answers) queueMicrotask(() => listener({ type: 'listening' }));
      return () => {
        listened.splice(listened.indexOf(topic), 1);
        listeners.delete(listener);
      };
    },
    async send(control: CallControl) {
      sent.push(control);
    },
    async requestsFor(callIds: readonly string[]) {
      return requestsFor(callIds);
    },
    async claimQueued(...args: Parameters<Store['claimQueued']>): Promise<ClaimedCall[]> {
      const claimed = await memory.claimQueued(...args);
      return claimed.map((call) => {
        const requests = requestsFor([call.record.callId]);
        return requests.length === 0 ? call : { ...call, requests };
      });
    },
  });
  /** Tells every listener, as another process's commit would. */
  const tell = (notice: StoreNotice) => {
    for (const listener of listeners) listener(notice);
  };
  return { store, listened, tell };
}
