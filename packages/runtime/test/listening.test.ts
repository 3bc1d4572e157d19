import { describe, expect, it } from 'vitest';
import { createRuntime } from '../src/index.js';
import { SimulatedClock } from '../src/testing.js';
import { gatedTool, settle, sharedStore, testRuntime } from './helpers.js';

describe('the notices a runtime listens to on a shared store', () => {
  it('hears the events of all only while something follows, and for a poll after', async () => {
    const { store, listened } = sharedStore({ answers: true });
    const { runtime, clock } = testRuntime([gatedTool('work').tool], { store, pollMs: 1_000 });
    await runtime.ready;
    // Calls to run and requests: no process is woken by every commit of the others for nothing.
    expect(listened).toEqual([{ type: 'work' }]);
    const first = runtime.follow({ callId: 'c1' }).subscribe();
    const second = runtime.follow({ sessionId: 's' }).subscribe();
    expect(listened).toEqual([{ type: 'work' }, { type: 'events' }]);
    first.unsubscribe();
    second.unsubscribe();
    // A follower that comes back within a poll finds the topic still listened to.
    clock.increment(999);
    const again = runtime.follow({ callId: 'c1' }).subscribe();
    again.unsubscribe();
    clock.increment(999);
    expect(listened).toEqual([{ type: 'work' }, { type: 'events' }]);
    clock.increment(1);
    expect(listened).toEqual([{ type: 'work' }]);
  });

  it('makes a client ready once it hears its replies, or after a poll if its store never says so', async () => {
    const heard = sharedStore({ answers: true });
    const { runtime: client } = testRuntime([gatedTool('work').tool], { store: heard.store, role: 'client' });
    await client.ready;
    expect(heard.listened).toEqual([{ type: 'replies', to: client.instanceId }]);

    const deaf = sharedStore({ answers: false });
    const { runtime: waiting, clock } = testRuntime([gatedTool('work').tool], {
      store: deaf.store,
      role: 'client',
      pollMs: 1_000,
    });
    let ready = false;
    void waiting.ready.then(() => {
      ready = true;
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(ready).toBe(false);
    clock.increment(1_000);
    await waiting.ready;
    expect(ready).toBe(true);
  });

  it('holds one poll timer for a client, however many calls wait for their replies', async () => {
    // A simulated clock that counts the timers armed now, by their delay.
    const simulated = new SimulatedClock();
    const armed = new Map<unknown, number>();
    const clock = {
      now: () => simulated.now(),
      setTimeout(callback: () => void, ms: number) {
        const handle = simulated.setTimeout(() => {
          armed.delete(handle);
          callback();
        }, ms);
        armed.set(handle, ms);
        return handle;
      },
      clearTimeout(handle: unknown) {
        armed.delete(handle);
        simulated.clearTimeout(handle as ReturnType<SimulatedClock['setTimeout']>);
      },
    };
    const armedFor = (ms: number) => [...armed.values()].filter((delay) => delay === ms).length;
    const { store, tell } = sharedStore({ answers: true });
    const pollMs = 7_777;
    const client = createRuntime({
      tools: [gatedTool('work').tool],
      store,
      role: 'client',
      clock,
      pollMs,
      inlineBudgetMs: 60_000,
    });
    await client.ready;
    const before = armedFor(pollMs);
    const replies = Promise.all(
      Array.from({ length: 50 }, (_, i) => client.call({ name: 'work', sessionId: 's', callId: `c${i}` })),
    );
    await settle();
    // The polls of the waiting calls: one timer for all of them.
    expect(armedFor(pollMs)).toBe(before + 1);
    // A worker ends them all, as another process would: the client reads them when told.
    const callIds = Array.from({ length: 50 }, (_, i) => `c${i}`);
    const ended = (await store.getCalls(callIds)).map((record) => ({
      ...record,
      status: 'succeeded' as const,
      output: 'done',
    }));
    await store.write({ calls: ended, writer: 'worker-1' });
    tell({ type: 'events', callIds, sessionIds: ['s'], writer: 'worker-1' });
    expect((await replies).map((reply) => reply.status)).toEqual(Array(50).fill('succeeded'));
    await client.close();
  });
});
