import { afterEach, describe, expect, it } from 'vitest';
import { createRuntime, type Runtime } from '../src/index.js';
import { SimulatedClock } from '../src/testing.js';
import { gatedTool, settle, sharedStore } from './helpers.js';

/**
 * A repeated call id at a process that does not run the call (two API servers behind a load
 * balancer that retries, two processes on one store): it is the same call, and its caller hears
 * what its first caller hears. Two runtimes on one shared store, one clock.
 */
const open: Runtime[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((runtime) => runtime.close()));
});

function twoProcesses(execution: Parameters<typeof gatedTool>[1] = {}) {
  const clock = new SimulatedClock();
  const { store } = sharedStore({ answers: true });
  const { tool, runs } = gatedTool('work', execution);
  const options = { tools: [tool], store, clock, pollMs: 100, inlineBudgetMs: 1_000 };
  const first = createRuntime(options);
  const second = createRuntime(options);
  open.push(first, second);
  return { clock, store, runs, first, second };
}

/** Moves the clock on in steps, letting the runtimes' promises run between them. */
async function pass(clock: SimulatedClock, ms: number): Promise<void> {
  for (let elapsed = 0; elapsed < ms; elapsed += 50) {
    clock.increment(50);
    await settle();
  }
}

describe('a repeated call id at another process', () => {
  it('waits as the first caller does, and hears the same end; the call runs once', async () => {
    const { clock, runs, first, second } = twoProcesses({ mode: 'auto' });
    await Promise.all([first.ready, second.ready]);
    const original = first.call({ name: 'work', args: {}, sessionId: 's', callId: 'c1' });
    await settle();
    expect(runs).toHaveLength(1);
    let repeatedReply: unknown;
    void second.call({ name: 'work', args: {}, sessionId: 's', callId: 'c1' }).then((reply) => {
      repeatedReply = reply;
    });
    await pass(clock, 300);
    expect(repeatedReply).toBeUndefined();
    runs[0]?.resolve('done');
    await pass(clock, 300);
    expect(await original).toMatchObject({ callId: 'c1', status: 'succeeded', output: 'done' });
    expect(repeatedReply).toMatchObject({ callId: 'c1', status: 'succeeded', output: 'done' });
    expect(runs).toHaveLength(1);
  });

  it('hears that the call goes on when it goes to the background, and its end is one notification', async () => {
    const { clock, store, runs, first, second } = twoProcesses({ mode: 'auto' });
    await Promise.all([first.ready, second.ready]);
    const original = first.call({ name: 'work', args: {}, sessionId: 's', callId: 'c1' });
    await settle();
    const repeated = second.call({ name: 'work', args: {}, sessionId: 's', callId: 'c1' });
    await pass(clock, 1_300);
    expect(await original).toMatchObject({ status: 'backgrounded' });
    expect(await repeated).toMatchObject({ callId: 'c1', status: 'backgrounded' });
    expect(await store.getCall('c1')).toMatchObject({ detached: true });
    runs[0]?.resolve('later');
    await pass(clock, 300);
    expect(await store.listNotifications({ sessionId: 's' })).toMatchObject([
      { callId: 'c1', outcome: 'succeeded' },
    ]);
    // Asked again once it ended: its end.
    expect(await second.call({ name: 'work', args: {}, sessionId: 's', callId: 'c1' })).toMatchObject({
      status: 'succeeded',
      output: 'later',
    });
    // That caller has the end: the notification of it is not given again.
    expect(await store.listNotifications({ sessionId: 's', status: 'queued' })).toEqual([]);
    expect(runs).toHaveLength(1);
  });

  it('sent to two processes at the same moment, is made by one: it runs once, and both callers hear its end', async () => {
    const { clock, store, runs, first, second } = twoProcesses({ mode: 'auto' });
    await Promise.all([first.ready, second.ready]);
    const replies = Promise.all([
      first.call({ name: 'work', args: {}, sessionId: 's', callId: 'c1' }),
      second.call({ name: 'work', args: {}, sessionId: 's', callId: 'c1' }),
    ]);
    await pass(clock, 200);
    expect(runs).toHaveLength(1);
    runs[0]?.resolve('once');
    await pass(clock, 300);
    expect(await replies).toMatchObject([
      { callId: 'c1', status: 'succeeded', output: 'once' },
      { callId: 'c1', status: 'succeeded', output: 'once' },
    ]);
    const events = await store.listEvents('c1');
    expect(events.filter((event) => event.type === 'queued')).toHaveLength(1);
    expect(events.filter((event) => event.type === 'succeeded')).toHaveLength(1);
    expect(runs).toHaveLength(1);
  });
});

describe('an id made for the call just now', () => {
  it('is not looked up as a repeated id is: freshId, and the id the runtime makes for a call with a signal', async () => {
    const { store } = sharedStore({ answers: true });
    const { tool, runs } = gatedTool('work');
    const runtime = createRuntime({ tools: [tool], store, clock: new SimulatedClock() });
    open.push(runtime);
    await runtime.ready;
    const lookedUp: string[] = [];
    const getCall = store.getCall.bind(store);
    store.getCall = (callId) => {
      lookedUp.push(callId);
      return getCall(callId);
    };
    const replies = [
      runtime.call({ name: 'work', sessionId: 's', callId: 'made-now' }, { freshId: true }),
      runtime.call({ name: 'work', sessionId: 's' }, { signal: new AbortController().signal }),
      runtime.call({ name: 'work', sessionId: 's', callId: 'given' }),
    ];
    await settle();
    for (const run of runs) run.resolve('done');
    expect((await Promise.all(replies)).map((reply) => reply.status)).toEqual([
      'succeeded',
      'succeeded',
      'succeeded',
    ]);
    // Only the caller's own id, which a retry may repeat, is looked up.
    expect(lookedUp).toEqual(['given']);
  });
});
