import { describe, expect, it } from 'vitest';
import type { InspectionEvent } from 'xstate';
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
