import { hostname } from 'node:os';
import type { CallRecord } from '@baton/contracts';
import type { ClaimedCall, Store } from '@baton/store';
import { makeCallRecord, makeInstance } from '@baton/store/testing';
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

/** A pid no process has (above Linux's largest): its instance is gone. */
const DEAD_PID = 4_194_305;

describe('the requests for the calls of a worker on a shared store', () => {
  it('carries out a request sent while its LISTEN connection was down, once it listens again', async () => {
    const { store, tell } = sharedStore({ answers: true });
    await store.write({ calls: [makeCallRecord({ callId: 'c1', toolName: 'work', attempt: 0 })] });
    const { tool, runs } = gatedTool('work');
    const { runtime } = testRuntime([tool], { store, role: 'worker' });
    await runtime.ready;
    await settle();
    expect(runs).toHaveLength(1);
    // Another process cancels the call; its notice reaches no one: this worker's LISTEN is down.
    await store.send?.({ type: 'control', callId: 'c1', action: 'cancel' });
    await settle();
    expect(runs[0]?.signal.aborted).toBe(false);
    // The connection is made again.
    tell({ type: 'listening' });
    await settle();
    expect(runs[0]?.signal.aborted).toBe(true);
    expect(await runtime.get('c1')).toMatchObject({ status: 'cancelled' });
  });

  it('carries out the requests sent for a call before it claimed it', async () => {
    const { store } = sharedStore({ answers: true });
    await store.write({ calls: [makeCallRecord({ callId: 'c1', toolName: 'work', attempt: 0 })] });
    // Sent while another worker had the call, which gave it back without hearing it.
    await store.send?.({ type: 'control', callId: 'c1', action: 'cancel' });
    const { tool, runs } = gatedTool('work');
    const { runtime } = testRuntime([tool], { store, role: 'worker' });
    await runtime.ready;
    await settle();
    expect(await runtime.get('c1')).toMatchObject({ status: 'cancelled' });
    expect(runs.filter((run) => !run.signal.aborted)).toHaveLength(0);
  });

  it('carries out a request heard while the claim that takes its call was out', async () => {
    const { store, tell } = sharedStore({ answers: true });
    await store.write({ calls: [makeCallRecord({ callId: 'c1', toolName: 'work', attempt: 0 })] });
    // The claim is made in the store at once; its answer reaches the worker only when let go.
    const answer = deferred<void>();
    const slowAnswers: Store = Object.assign(Object.create(store), {
      async claimQueued(...args: Parameters<Store['claimQueued']>): Promise<ClaimedCall[]> {
        const claimed = await store.claimQueued(...args);
        if (claimed.length > 0) await answer.promise;
        return claimed;
      },
    });
    const { tool, runs } = gatedTool('work');
    const { runtime } = testRuntime([tool], { store: slowAnswers, role: 'worker' });
    await settle();
    expect((await store.getCall('c1'))?.ownerId).toBe(runtime.instanceId);
    // A cancel told after the claim read the call's requests, before its answer came back.
    tell({ type: 'control', callId: 'c1', action: 'cancel' });
    answer.resolve();
    await runtime.ready;
    await settle();
    expect(await runtime.get('c1')).toMatchObject({ status: 'cancelled' });
    expect(runs.filter((run) => !run.signal.aborted)).toHaveLength(0);
  });

  it('carries out a request sent to a worker that died, once it recovers the call', async () => {
    const { store } = sharedStore({ answers: true });
    await store.registerInstance(makeInstance({ id: 'dead', pid: DEAD_PID, host: hostname() }));
    const running = makeCallRecord({
      callId: 'c1',
      toolName: 'work',
      status: 'inline',
      ownerId: 'dead',
      attempt: 1,
      mode: 'auto',
    });
    await store.write({ calls: [running] });
    // The cancel went to the worker that ran the call, which died before it heard it.
    await store.send?.({ type: 'control', callId: 'c1', action: 'cancel' });
    const { tool, runs } = gatedTool('work', { idempotent: true });
    const { runtime } = testRuntime([tool], { store, role: 'worker' });
    await runtime.ready;
    await settle();
    expect(await runtime.get('c1')).toMatchObject({ status: 'cancelled', ownerId: runtime.instanceId });
    expect(runs.filter((run) => !run.signal.aborted)).toHaveLength(0);
  });

  it('carries out the requests of a claimed call whose taking up failed, once it is taken up', async () => {
    const { store } = sharedStore({ answers: true });
    await store.write({ calls: [makeCallRecord({ callId: 'c1', toolName: 'work', attempt: 0 })] });
    await store.send?.({ type: 'control', callId: 'c1', action: 'cancel' });
    const { tool: gated, runs } = gatedTool('work');
    // Its first taking up fails (a read under load, say): the call is kept, and taken up later.
    let failures = 1;
    const tool: typeof gated = Object.create(gated, {
      validateInput: {
        value: (args: unknown) =>
          failures-- > 0 ? Promise.reject(new Error('not now')) : gated.validateInput(args),
      },
    });
    const { runtime, clock } = testRuntime([tool], { store, role: 'worker', pollMs: 1_000 });
    await runtime.ready;
    await settle();
    expect(await store.getCall('c1')).toMatchObject({ status: 'queued', ownerId: runtime.instanceId });
    clock.increment(1_000);
    await settle();
    expect(await runtime.get('c1')).toMatchObject({ status: 'cancelled' });
    expect(runs.filter((run) => !run.signal.aborted)).toHaveLength(0);
  });

  /**
   * A shared store whose next claim is made in the store, and then its answer is lost on the way,
   * as when the connection drops after the commit: the claimer hears that the store could not be
   * reached.
   */
  function losingClaimAnswers() {
    const { store, tell } = sharedStore({ answers: true });
    const away = () => Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
    const state = { loseNext: false };
    const losing: Store = Object.assign(Object.create(store), {
      isUnavailable: (error: unknown) => (error as { code?: string }).code === 'ECONNRESET',
      async claimQueued(...args: Parameters<Store['claimQueued']>): Promise<ClaimedCall[]> {
        const claimed = await store.claimQueued(...args);
        if (claimed.length > 0 && state.loseNext) {
          state.loseNext = false;
          throw away();
        }
        return claimed;
      },
    });
    return { store: losing, tell, state };
  }

  it('takes up, after an outage, a call whose claim was made and its answer lost: it runs once, here', async () => {
    const { store, tell, state } = losingClaimAnswers();
    const { tool, runs } = gatedTool('work');
    const { runtime, clock } = testRuntime([tool], { store, role: 'worker', leaseMs: 3_000 });
    await runtime.ready;
    state.loseNext = true;
    await store.write({ calls: [makeCallRecord({ callId: 'c1', toolName: 'work', attempt: 0 })] });
    tell({ type: 'queued' });
    await settle();
    clock.increment(100);
    await settle();
    // Held here in the store, and known to no one: the claim made again found nothing to take.
    expect((await store.getCall('c1'))?.ownerId).toBe(runtime.instanceId);
    expect(runs).toHaveLength(0);
    // The next heartbeat finds the store back, and what it holds is taken up.
    clock.increment(1_000);
    await settle();
    expect(runs).toHaveLength(1);
    runs[0]?.resolve('done');
    await settle();
    expect(await runtime.get('c1')).toMatchObject({ status: 'succeeded', ownerId: runtime.instanceId });
    clock.increment(3_000);
    await settle();
    expect(runs).toHaveLength(1);
  });

  it('gives back to the workers, after an outage, a call a client claimed to detach whose answer was lost', async () => {
    const { store, tell, state } = losingClaimAnswers();
    const { tool } = gatedTool('work', { mode: 'auto' });
    const { runtime, clock } = testRuntime([tool], {
      store,
      role: 'client',
      leaseMs: 3_000,
      inlineBudgetMs: 500,
    });
    await runtime.ready;
    state.loseNext = true;
    const reply = runtime.call({ name: 'work', args: {}, sessionId: 's', callId: 'c1' });
    await settle();
    // Its budget passes with no worker: the client takes it to detach it, and loses the answer.
    clock.increment(600);
    await settle();
    clock.increment(100);
    await settle();
    expect((await store.getCall('c1'))?.ownerId).toBe(runtime.instanceId);
    clock.increment(1_000);
    await settle();
    const record = await store.getCall('c1');
    expect(record).toMatchObject({ status: 'queued' });
    expect(record?.ownerId).toBeUndefined();
    const [claimed] = await store.claimQueued('a-worker', 10);
    expect(claimed?.record.callId).toBe('c1');
    // That worker ends it, and the caller hears.
    await store.write({
      calls: [
        { ...(claimed?.record as CallRecord), status: 'succeeded', endedAt: clock.now(), output: 'ran' },
      ],
      writer: 'a-worker',
    });
    tell({ type: 'events', callIds: ['c1'], sessionIds: ['s'], writer: 'a-worker' });
    expect(await reply).toMatchObject({ status: 'succeeded', output: 'ran' });
  });
});
