import type { ClaimedCall, Store } from '@baton/store';
import { makeCallRecord } from '@baton/store/testing';
import { describe, expect, it } from 'vitest';
import { deferred } from '../src/testing.js';
import { gatedTool, settle, sharedStore, testRuntime } from './helpers.js';

describe('a worker on a shared store', () => {
  it('gives back the calls of a claim that comes back after it began to close: none starts here', async () => {
    const { store } = sharedStore({ answers: true });
    // A call another process submitted: queued, no owner.
    await store.write({ calls: [makeCallRecord({ callId: 'c1', toolName: 'work', attempt: 0 })] });
    // The claim is made in the store at once; its answer reaches the worker only when let go.
    const answer = deferred<void>();
    let claimsOut = 0;
    const slowAnswers: Store = Object.assign(Object.create(store), {
      async claimQueued(...args: Parameters<Store['claimQueued']>): Promise<ClaimedCall[]> {
        const claimed = await store.claimQueued(...args);
        if (claimed.length === 0) return claimed;
        claimsOut++;
        await answer.promise;
        return claimed;
      },
    });
    const { tool, runs } = gatedTool('work');
    // Its first claim is out (a runtime is ready once it returns).
    const { runtime } = testRuntime([tool], { store: slowAnswers, role: 'worker' });
    await settle();
    expect(claimsOut).toBe(1);
    expect((await store.getCall('c1'))?.ownerId).toBe(runtime.instanceId);

    const closed = runtime.close();
    answer.resolve();
    await closed;
    expect(runs).toHaveLength(0);
    const record = await store.getCall('c1');
    expect(record).toMatchObject({ status: 'queued', attempt: 0 });
    expect(record?.ownerId).toBeUndefined();
  });

  it('takes no call before its store says it listens: a cancel for the call would not reach it', async () => {
    const { store, tell } = sharedStore({ answers: false });
    await store.write({ calls: [makeCallRecord({ callId: 'c1', toolName: 'work', attempt: 0 })] });
    const { tool, runs } = gatedTool('work');
    const { runtime, clock } = testRuntime([tool], { store, role: 'worker', pollMs: 1_000 });
    let ready = false;
    void runtime.ready.then(() => {
      ready = true;
    });
    tell({ type: 'queued' });
    await settle();
    clock.increment(999);
    await settle();
    expect({ ready, runs: runs.length, owner: (await store.getCall('c1'))?.ownerId }).toEqual({
      ready: false,
      runs: 0,
      owner: undefined,
    });
    tell({ type: 'listening' });
    await runtime.ready;
    await settle();
    expect(runs).toHaveLength(1);
    expect((await store.getCall('c1'))?.ownerId).toBe(runtime.instanceId);
  });

  it('takes calls after a poll interval on a store that never says it listens (it polls them)', async () => {
    const { store } = sharedStore({ answers: false });
    await store.write({ calls: [makeCallRecord({ callId: 'c1', toolName: 'work', attempt: 0 })] });
    const { tool, runs } = gatedTool('work');
    const { runtime, clock } = testRuntime([tool], { store, role: 'worker', pollMs: 1_000 });
    await settle();
    expect(runs).toHaveLength(0);
    clock.increment(1_000);
    await runtime.ready;
    await settle();
    expect(runs).toHaveLength(1);
  });
});
