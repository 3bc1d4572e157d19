import { hostname } from 'node:os';
import { memoryStore } from '@baton/store';
import { makeCallRecord, makeInstance } from '@baton/store/testing';
import { describe, expect, it } from 'vitest';
import type { InspectionEvent } from 'xstate';
import { createRuntime } from '../src/index.js';
import { SimulatedClock } from '../src/testing.js';
import { gatedTool, settle, testRuntime } from './helpers.js';

describe('createRuntime({ inspect })', () => {
  it('lets an XState inspection observer watch each call run as the call machine, start to end', async () => {
    const seen: InspectionEvent[] = [];
    const { tool, runs } = gatedTool('work', { mode: 'auto' });
    const { runtime, clock } = testRuntime([tool], {
      inspect: (event) => seen.push(event),
      inlineBudgetMs: 100,
    });
    const reply = runtime.call({ name: 'work', sessionId: 's', callId: 'c1' });
    await settle();
    clock.increment(100);
    expect(await reply).toMatchObject({ status: 'backgrounded' });
    runs[0]?.resolve('done');
    await settle();

    const actors = seen.filter((event) => event.type === '@xstate.actor');
    expect(actors).toHaveLength(1);
    expect((actors[0]?.actorRef as { id?: string } | undefined)?.id).toBe('c1');
    const events = seen.flatMap((event) => (event.type === '@xstate.event' ? [event.event.type] : []));
    expect(events).toEqual(['xstate.init', 'ADMIT', 'START', 'BUDGET', 'DONE']);
    const states = seen.flatMap((event) =>
      event.type === '@xstate.snapshot' ? [(event.snapshot as unknown as { value: unknown }).value] : [],
    );
    expect(states).toEqual([
      { queued: 'waiting' },
      { queued: 'waiting' },
      { inline: 'running' },
      { backgrounded: 'running' },
      'succeeded',
    ]);
    expect((await runtime.get('c1'))?.status).toBe('succeeded');
  });
});

describe('createRuntime({ inspect }) and calls taken up after a crash', () => {
  it('watches a recovered call too, from the state its record was left in', async () => {
    const store = memoryStore();
    // A process id no process has: the instance is gone, its calls are orphans.
    await store.registerInstance(makeInstance({ id: 'dead', pid: 4_194_305, host: hostname() }));
    await store.write({
      calls: [
        makeCallRecord({ callId: 'orphan', toolName: 'work', status: 'inline', attempt: 1, ownerId: 'dead' }),
      ],
    });
    const seen: InspectionEvent[] = [];
    const { tool } = gatedTool('work', { idempotent: true });
    const runtime = createRuntime({
      tools: [tool],
      store,
      clock: new SimulatedClock(),
      inspect: (event) => seen.push(event),
    });
    await runtime.ready;
    await settle();
    const ids = seen.flatMap((event) =>
      event.type === '@xstate.actor' ? [(event.actorRef as { id?: string }).id] : [],
    );
    expect(ids).toEqual(['orphan']);
    const events = seen.flatMap((event) => (event.type === '@xstate.event' ? [event.event.type] : []));
    expect(events).toEqual(['xstate.init', 'REQUEUE', 'ADMIT', 'START']);
    await runtime.close();
  });
});
