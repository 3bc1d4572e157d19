import type { Store } from '@baton/store';
import { makeCallRecord } from '@baton/store/testing';
import { describe, expect, it } from 'vitest';
import { gatedTool, settle, sharedStore, testRuntime } from './helpers.js';

describe('the same call id twice at one client on a shared store', () => {
  it('sent at once, as new: one call runs, and both requests are answered with its end', async () => {
    const { store, tell } = sharedStore({ answers: true });
    const { tool, runs } = gatedTool('work');
    const client = testRuntime([tool], { store, role: 'client' });
    await client.runtime.ready;
    const request = { name: 'work', args: {}, sessionId: 's', callId: 'c1' };
    const first = client.runtime.call(request);
    const second = client.runtime.call(request);
    await settle();

    const worker = testRuntime([tool], { store, role: 'worker' });
    await worker.runtime.ready;
    tell({ type: 'queued' });
    await settle();
    expect(runs).toHaveLength(1);
    runs[0]?.resolve('done');
    await settle();
    tell({ type: 'events', callIds: ['c1'], sessionIds: ['s'], writer: worker.runtime.instanceId });
    const answered = { status: 'succeeded', output: 'done' };
    expect(await first).toMatchObject(answered);
    expect(await second).toMatchObject(answered);
    expect(runs).toHaveLength(1);
  });

  it('sent again while the first waits for its worker: both are answered once it is detached at the budget', async () => {
    const { store } = sharedStore({ answers: true });
    const { tool } = gatedTool('work', { mode: 'auto' });
    const client = testRuntime([tool], { store, role: 'client', inlineBudgetMs: 500 });
    await client.runtime.ready;
    const request = { name: 'work', args: {}, sessionId: 's', callId: 'c1' };
    const first = client.runtime.call(request);
    await settle();
    client.clock.increment(100);
    const second = client.runtime.call(request);
    await settle();
    client.clock.increment(500);
    await settle();
    expect(await first).toMatchObject({ callId: 'c1', status: 'backgrounded' });
    expect(await second).toMatchObject({ callId: 'c1', status: 'backgrounded' });
  });
});

describe('a client that stops while it waits for a call another client made under the same id', () => {
  it('hands the call over before its store closes: the caller hears that it goes on, its end will be told, and nothing touches the closed store', async () => {
    const { store } = sharedStore({ answers: true });
    const { tool } = gatedTool('work', { mode: 'auto' });
    const usedAfterClose: string[] = [];
    let storeClosed = false;
    let lookups = 0;
    const watched: Store = new Proxy(store, {
      get(target, name, receiver) {
        const value = Reflect.get(target, name, receiver);
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          if (storeClosed) usedAfterClose.push(String(name));
          if (name === 'close') storeClosed = true;
          // The other client stores the call just after this one looked its id up.
          if (name === 'getCall' && lookups++ === 0) return Promise.resolve(undefined);
          return value.apply(target, args);
        };
      },
    });
    const client = testRuntime([tool], { store: watched, role: 'client', inlineBudgetMs: 500 });
    await client.runtime.ready;
    await store.write({
      calls: [
        makeCallRecord({
          callId: 'c1',
          toolName: 'work',
          mode: 'auto',
          attempt: 0,
          createdAt: client.clock.now(),
        }),
      ],
    });
    const reply = client.runtime.call({ name: 'work', args: {}, sessionId: 's1', callId: 'c1' });
    await settle();
    await client.runtime.close();
    expect(await reply).toMatchObject({ callId: 'c1', status: 'backgrounded' });
    expect(await store.getCall('c1')).toMatchObject({ status: 'queued', detached: true });
    client.clock.increment(10_000);
    await settle();
    expect(usedAfterClose).toEqual([]);
  });
});
