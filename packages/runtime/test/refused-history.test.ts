import { type CallEvent, defineTool, type ToolContext } from '@baton/contracts';
import { memoryStore, type Store, type StoreWrite } from '@baton/store';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createRuntime } from '../src/index.js';
import { type Deferred, deferred, SimulatedClock } from '../src/testing.js';
import { settle } from './helpers.js';
import { pass, storeThatGoesAway } from './store-that-goes-away.js';

const TERMINAL = ['succeeded', 'failed', 'cancelled', 'timed_out'];

/** A background tool that says what the test tells it to, and ends when the test says. */
function tellingTool() {
  const runs: { ctx: ToolContext; done: Deferred<string> }[] = [];
  const tool = defineTool({
    name: 'telling',
    description: 'Tells its status, in the background',
    input: z.object({}),
    execution: { mode: 'background' },
    execute(_, ctx) {
      const done = deferred<string>();
      runs.push({ ctx, done });
      return done.promise;
    },
  });
  return { tool, runs };
}

/** A history with no hole: numbered 1, 2, 3... from `queued`, with one end, and after it only its notice. */
function expectWhole(events: readonly CallEvent[]): void {
  expect(events.map((event) => event.seq)).toEqual(events.map((_, index) => index + 1));
  expect(events[0]?.type).toBe('queued');
  const end = events.findIndex((event) => TERMINAL.includes(event.type));
  expect(end).toBeGreaterThan(0);
  expect(events.slice(end + 1).map((event) => event.type)).toEqual(
    events.slice(end + 1).map(() => 'notification'),
  );
}

function statusesOf(events: readonly CallEvent[]): string[] {
  return events.flatMap((event) => (event.type === 'status' ? [event.text] : []));
}

async function started(store: Store, options: { storeRetryMs?: number } = {}) {
  const clock = new SimulatedClock();
  const { tool, runs } = tellingTool();
  const runtime = createRuntime({ tools: [tool], store, clock, ...options });
  await runtime.ready;
  const { callId } = await runtime.call({ name: 'telling', sessionId: 's' });
  await settle();
  return { runtime, clock, runs, callId };
}

describe('the history of a call whose rows the store refused', () => {
  it('keeps the events of a batch refused while the store was away past the ride-out, ahead of the later ones', async () => {
    const kept = memoryStore();
    const { store, state } = storeThatGoesAway(kept);
    const { clock, runs, callId } = await started(store, { storeRetryMs: 1_000 });
    state.away = true;
    runs[0]?.ctx.status('while away');
    await pass(clock, 300);
    // Told while the first batch is ridden out: its event waits in a later batch.
    runs[0]?.ctx.status('later');
    await pass(clock, 1_000);
    state.away = false;
    await pass(clock, 5_000);
    const events = await kept.listEvents(callId);
    expectWhole(events);
    expect(statusesOf(events)).toEqual(['while away', 'later']);
    expect(await kept.getCall(callId)).toMatchObject({
      status: 'failed',
      error: { code: 'persistence_failed' },
    });
    const notifications = await kept.listNotifications({ sessionId: 's' });
    expect(notifications.map((notification) => notification.outcome)).toEqual(['failed']);
  });

  it('ends a call whose rows the store refuses right after what it kept, with none of the rows told later', async () => {
    const kept = memoryStore();
    const gate = { opened: deferred() };
    const refusing = Object.create(kept) as Store;
    Object.defineProperty(refusing, 'write', {
      value: async (write: StoreWrite) => {
        if (write.events?.some((event) => event.type === 'status' && event.text === 'refused')) {
          await gate.opened.promise;
          throw new Error('string or blob too big');
        }
        return kept.write(write);
      },
    });
    const { runs, callId } = await started(refusing);
    runs[0]?.ctx.status('refused');
    await settle();
    // Told while the refused batch is on its way: written alone, it would leave a hole.
    runs[0]?.ctx.status('after');
    await settle();
    gate.opened.resolve();
    await settle();
    runs[0]?.done.resolve('done');
    await settle();
    const events = await kept.listEvents(callId);
    expectWhole(events);
    expect(statusesOf(events)).toEqual([]);
    expect(events.find((event) => TERMINAL.includes(event.type))).toMatchObject({
      type: 'failed',
      error: { code: 'persistence_failed' },
    });
  });

  it('numbers the persistence_failed end that replaces a refused end right after what the store kept', async () => {
    const kept = memoryStore();
    const refusing = Object.create(kept) as Store;
    Object.defineProperty(refusing, 'write', {
      value: async (write: StoreWrite) => {
        if (write.calls?.some((record) => record.result === 'too big'))
          throw new Error('string or blob too big');
        return kept.write(write);
      },
    });
    const { runs, callId } = await started(refusing);
    runs[0]?.ctx.status('kept');
    await settle();
    runs[0]?.done.resolve('too big');
    await settle();
    const events = await kept.listEvents(callId);
    expectWhole(events);
    expect(statusesOf(events)).toEqual(['kept']);
    expect(await kept.getCall(callId)).toMatchObject({
      status: 'failed',
      error: { code: 'persistence_failed' },
    });
  });

  it('ends once a call whose end the store kept while its answer was lost past the ride-out', async () => {
    const kept = memoryStore();
    const { store, state } = storeThatGoesAway(kept);
    const { clock, runs, callId } = await started(store, { storeRetryMs: 1_000 });
    // The end is stored, its answer lost, and every write after that fails until the ride-out is over.
    state.loseAnswer = (write) => {
      const ends = write.events?.some((event) => TERMINAL.includes(event.type)) === true;
      if (ends) state.away = true;
      return ends;
    };
    runs[0]?.done.resolve('charged once');
    await pass(clock, 1_500);
    state.loseAnswer = () => false;
    state.away = false;
    await pass(clock, 10_000);
    const events = await kept.listEvents(callId);
    expectWhole(events);
    expect(await kept.getCall(callId)).toMatchObject({ status: 'succeeded', result: 'charged once' });
    const notifications = await kept.listNotifications({ sessionId: 's' });
    expect(notifications.map((notification) => notification.outcome)).toEqual(['succeeded']);
  });
});
