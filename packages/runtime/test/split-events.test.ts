import type { CallEvent } from '@baton/contracts';
import { makeInstance } from '@baton/store/testing';
import { describe, expect, it } from 'vitest';
import { gatedTool, settle, sharedStore, testRuntime } from './helpers.js';

const numbered = (events: readonly CallEvent[]) => events.map((event) => [event.seq, event.type]);

describe("a client's call on a shared store: its events", () => {
  it('are stored by the worker, from its queued event on; a follower meanwhile is shown it queued, each event once', async () => {
    const { store, tell } = sharedStore({ answers: true });
    const { tool, runs } = gatedTool('work');
    const client = testRuntime([tool], { store, role: 'client' });
    await client.runtime.ready;
    const reply = client.runtime.call({ name: 'work', args: {}, sessionId: 's', callId: 'c1' });
    await settle();
    // The client stored the call alone: no event row, no lock on the session's events.
    expect(await store.getCall('c1')).toMatchObject({ status: 'queued' });
    expect(await store.listEvents('c1')).toEqual([]);
    const followed: CallEvent[] = [];
    client.runtime.follow({ callId: 'c1' }).subscribe((event) => followed.push(event));
    await settle();
    expect(numbered(followed)).toEqual([[1, 'queued']]);

    const worker = testRuntime([tool], { store, role: 'worker' });
    await worker.runtime.ready;
    tell({ type: 'queued' });
    await settle();
    expect(runs).toHaveLength(1);
    runs[0]?.resolve('done');
    await settle();
    tell({ type: 'events', callIds: ['c1'], sessionIds: ['s'], writer: worker.runtime.instanceId });
    expect(await reply).toMatchObject({ status: 'succeeded', output: 'done' });
    await settle();

    const stored = await store.listEvents('c1');
    expect(numbered(stored)).toEqual([
      [1, 'queued'],
      [2, 'started'],
      [3, 'succeeded'],
    ]);
    // What the follower was shown before the claim is the event the worker stored.
    expect(followed).toEqual(stored);
    expect(stored[0]).toMatchObject({
      mode: 'inline',
      to: 'queued',
      at: (await store.getCall('c1'))?.createdAt,
    });
  });

  it('of a call detached while no worker had it are its queued and backgrounded events, then the worker’s', async () => {
    const { store, tell } = sharedStore({ answers: true });
    const { tool, runs } = gatedTool('work', { mode: 'auto' });
    const client = testRuntime([tool], { store, role: 'client', inlineBudgetMs: 500 });
    await client.runtime.ready;
    const reply = client.runtime.call({ name: 'work', args: {}, sessionId: 's', callId: 'c1' });
    await settle();
    client.clock.increment(600);
    await settle();
    expect(await reply).toMatchObject({ status: 'backgrounded' });
    expect(numbered(await store.listEvents('c1'))).toEqual([
      [1, 'queued'],
      [2, 'backgrounded'],
    ]);

    const worker = testRuntime([tool], { store, role: 'worker' });
    await worker.runtime.ready;
    tell({ type: 'queued' });
    await settle();
    runs[0]?.resolve('done');
    await settle();
    expect(numbered(await store.listEvents('c1'))).toEqual([
      [1, 'queued'],
      [2, 'backgrounded'],
      [3, 'started'],
      [4, 'succeeded'],
      [5, 'notification'],
    ]);
  });

  it('of a call whose worker died before it stored any: the recovering worker stores its queued event first', async () => {
    const { store, tell } = sharedStore({ answers: true });
    const { tool, runs } = gatedTool('work', { idempotent: true });
    const client = testRuntime([tool], { store, role: 'client' });
    await client.runtime.ready;
    const reply = client.runtime.call({ name: 'work', args: {}, sessionId: 's', callId: 'c1' });
    await settle();
    // A worker on another host claimed it, and died before its first write.
    await store.registerInstance(makeInstance({ id: 'gone', host: 'elsewhere', heartbeatAt: 0, leaseMs: 1 }));
    await store.claimQueued('gone', 1);
    expect(await store.listEvents('c1')).toEqual([]);

    const worker = testRuntime([tool], { store, role: 'worker', leaseMs: 3_000 });
    await worker.runtime.ready;
    worker.clock.increment(25_000);
    await settle();
    expect(runs).toHaveLength(1);
    runs[0]?.resolve('done');
    await settle();
    tell({ type: 'events', callIds: ['c1'], sessionIds: ['s'], writer: worker.runtime.instanceId });
    expect(await reply).toMatchObject({ status: 'succeeded', output: 'done' });
    // As when its client stored the first: the call was queued, then queued again by its recovery.
    expect(numbered(await store.listEvents('c1'))).toEqual([
      [1, 'queued'],
      [2, 'queued'],
      [3, 'started'],
      [4, 'succeeded'],
    ]);
  });
});

describe("a client's call that ends just after its worker's budget passed", () => {
  it('is answered backgrounded, never its end: its end is the notification, so the model sees it once', async () => {
    const { store, tell } = sharedStore({ answers: true });
    const { tool, runs } = gatedTool('work', { mode: 'auto' });
    const client = testRuntime([tool], { store, role: 'client', inlineBudgetMs: 500 });
    await client.runtime.ready;
    const reply = client.runtime.call({ name: 'work', args: {}, sessionId: 's', callId: 'c1' });
    await settle();
    const worker = testRuntime([tool], { store, role: 'worker', inlineBudgetMs: 500 });
    await worker.runtime.ready;
    tell({ type: 'queued' });
    await settle();
    // The worker's budget passes, and the call ends, before the client reads the record.
    worker.clock.increment(600);
    await settle();
    runs[0]?.resolve('done');
    await settle();
    expect(await store.getCall('c1')).toMatchObject({ status: 'succeeded', detached: true });
    tell({ type: 'events', callIds: ['c1'], sessionIds: ['s'], writer: worker.runtime.instanceId });
    expect(await reply).toMatchObject({ callId: 'c1', status: 'backgrounded' });
    expect(await store.listNotifications({ sessionId: 's' })).toHaveLength(1);
  });
});
