import { hostname } from 'node:os';
import { type CallRecord, defineTool, success } from '@baton/contracts';
import { memoryStore, type Store } from '@baton/store';
import { makeCallRecord, makeInstance } from '@baton/store/testing';
import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { createRuntime } from '../src/index.js';
import { SimulatedClock } from '../src/testing.js';
import { gatedTool, reportingTool, settle, storedEvents, testRuntime, typesOf } from './helpers.js';

/** No process has this pid (above Linux's largest pid_max), so an instance that claims it is gone. */
const DEAD_PID = 4_194_305;

describe('artifacts of a background run (the background runs)', () => {
  it('keeps output.log ([stream]-prefixed) and a pretty result.json', async () => {
    const { tool: worker, step } = reportingTool(
      (ctx) => {
        ctx.log('stdout', 'fetching\n');
        ctx.log('stderr', 'slow mirror\n');
      },
      { pages: 3 },
    );
    const { runtime } = testRuntime([worker]);
    const reply = await runtime.call({ name: 'worker', sessionId: 's' });
    step.resolve();
    await settle();
    expect(await runtime.artifact(reply.callId, 'output.log')).toBe(
      '[stdout] fetching\n[stderr] slow mirror\n',
    );
    expect(await runtime.artifact(reply.callId, 'result.json')).toBe('{\n  "pages": 3\n}');
  });

  it('caps the log at 262,144 characters with the seed line, and lets a raw output stand for the log', async () => {
    const chatty = defineTool({
      name: 'chatty',
      description: 'c',
      input: z.object({ raw: z.boolean() }),
      execution: { mode: 'background' },
      async execute({ raw }, ctx) {
        for (let i = 0; i < 300; i++) ctx.log('stdout', 'x'.repeat(1_000));
        return raw ? success('done', { rawOutput: 'the raw bytes' }) : 'done';
      },
    });
    const { runtime } = testRuntime([chatty]);
    const capped = await runtime.call({ name: 'chatty', args: { raw: false }, sessionId: 's' });
    const raw = await runtime.call({ name: 'chatty', args: { raw: true }, sessionId: 's' });
    await settle();
    const log = await runtime.artifact(capped.callId, 'output.log');
    expect(log?.length).toBe(
      262_144 + '\n[system] background output truncated at 262144 characters\n'.length,
    );
    expect(log?.endsWith('xxx\n[system] background output truncated at 262144 characters\n')).toBe(true);
    expect(await runtime.artifact(raw.callId, 'output.log')).toBe('the raw bytes');
  });

  it('writes { status: failed, error } as result.json of a failed run, and no artifacts for inline calls', async () => {
    const { tool, runs } = gatedTool('fragile', { mode: 'auto' });
    const { runtime, clock } = testRuntime([tool]);
    const pending = runtime.call({ name: 'fragile', sessionId: 's' });
    clock.increment(300);
    const reply = await pending;
    const { ToolError } = await import('@baton/contracts');
    runs[0]?.reject(new ToolError('disk full'));
    await settle();
    expect(JSON.parse((await runtime.artifact(reply.callId, 'result.json')) ?? '')).toEqual({
      status: 'failed',
      error: 'disk full',
    });
    const quick = defineTool({ name: 'quick', description: 'q', input: z.object({}), execute: () => 1 });
    const other = testRuntime([quick]);
    const inline = await other.runtime.call({ name: 'quick', sessionId: 's' });
    expect(await other.runtime.artifact(inline.callId, 'result.json')).toBeUndefined();
  });
});

describe('recovery of the calls of a runtime that is gone', () => {
  async function orphans(
    store: Store,
    records: CallRecord[],
    instance = makeInstance({ id: 'dead', pid: DEAD_PID, host: hostname() }),
  ) {
    await store.registerInstance(instance);
    await store.write({
      calls: records,
      events: records.map((record) => ({
        type: 'queued' as const,
        mode: record.mode,
        callId: record.callId,
        sessionId: record.sessionId,
        toolName: record.toolName,
        seq: 1,
        at: 0,
      })),
    });
  }

  const runs: string[] = [];
  const tool = (name: string, idempotent: boolean) =>
    defineTool({
      name,
      description: name,
      input: z.object({ n: z.number() }),
      execution: { idempotent, mode: 'auto' },
      execute: ({ n }, ctx) => {
        runs.push(`${ctx.callId}#${ctx.attempt}`);
        return n * 2;
      },
    });
  const tools = [tool('safe', true), tool('unsafe', false)];
  const orphan = (
    callId: string,
    toolName: string,
    status: CallRecord['status'],
    extra: Partial<CallRecord> = {},
  ) =>
    makeCallRecord({
      callId,
      toolName,
      status,
      ownerId: 'dead',
      attempt: status === 'queued' ? 0 : 1,
      args: { n: 21 },
      mode: 'auto',
      ...extra,
    });

  it('re-runs idempotent calls with the next attempt, ends the others interrupted, and notifies backgrounded ones once', async () => {
    runs.length = 0;
    const store = memoryStore();
    await orphans(store, [
      orphan('safe_inline', 'safe', 'inline'),
      orphan('safe_bg', 'safe', 'backgrounded', { detached: true }),
      orphan('unsafe_inline', 'unsafe', 'inline'),
      orphan('unsafe_bg', 'unsafe', 'backgrounded', { detached: true }),
      orphan('unsafe_queued', 'unsafe', 'queued'),
      orphan('safe_spent', 'safe', 'backgrounded', { detached: true, attempt: 3 }),
    ]);
    const runtime = createRuntime({ tools, store, clock: new SimulatedClock() });
    await runtime.ready;
    await settle();
    expect(runs.sort()).toEqual(['safe_bg#2', 'safe_inline#2', 'unsafe_queued#1']);
    const status = async (callId: string) => {
      const record = await runtime.get(callId);
      return [record?.status, record?.attempt, record?.error?.code, record?.ownerId === runtime.instanceId];
    };
    expect(await status('safe_inline')).toEqual(['succeeded', 2, undefined, true]);
    expect(await status('safe_bg')).toEqual(['succeeded', 2, undefined, true]);
    expect(await status('unsafe_queued')).toEqual(['succeeded', 1, undefined, true]);
    expect(await status('unsafe_inline')).toEqual(['failed', 1, 'interrupted', true]);
    expect(await status('unsafe_bg')).toEqual(['failed', 1, 'interrupted', true]);
    expect(await status('safe_spent')).toEqual(['failed', 3, 'interrupted', true]);
    const notified = (await runtime.notifications.list()).map((n) => `${n.callId}:${n.outcome}`).sort();
    expect(notified).toEqual(['safe_bg:succeeded', 'safe_spent:failed', 'unsafe_bg:failed']);
    const [interrupted] = await runtime.notifications
      .list({ status: 'queued' })
      .then((list) => list.filter((n) => n.callId === 'unsafe_bg'));
    expect(interrupted?.body).toBe(
      'Tool call:\nunsafe({\n  "n": 21\n})\nError:\nThe process running the tool call stopped before the call finished',
    );
    // The events go on from the stored ones, without a gap.
    expect((await storedEvents(runtime, 'safe_bg')).map((event) => `${event.seq}:${event.type}`)).toEqual([
      '1:queued',
      '2:queued',
      '3:started',
      '4:succeeded',
      '5:notification',
    ]);
    expect(await store.listInstances()).toEqual([expect.objectContaining({ id: runtime.instanceId })]);
    await runtime.close();
  });

  it('ends a queued orphan whose tool is gone interrupted, rather than leaving it waiting forever', async () => {
    const store = memoryStore();
    await orphans(store, [
      orphan('gone_tool', 'retired', 'queued'),
      orphan('gone_bg', 'retired', 'inline', { detached: true }),
    ]);
    const runtime = createRuntime({ tools, store, clock: new SimulatedClock() });
    await runtime.ready;
    await settle();
    expect((await runtime.get('gone_tool'))?.error?.code).toBe('interrupted');
    expect((await runtime.get('gone_bg'))?.error?.code).toBe('interrupted');
    expect(runtime.stats().active).toBe(0);
    await runtime.close();
  });

  it("keeps the tool's own inline budget for a recovered call: a caller that asks again is answered at it, not at the runtime's", async () => {
    const store = memoryStore();
    const { tool, runs } = gatedTool('slow', { mode: 'auto', idempotent: true, inlineBudgetMs: 5_000 });
    await orphans(store, [orphan('slow_call', 'slow', 'inline', { createdAt: 0 })]);
    const clock = new SimulatedClock();
    clock.set(1_000);
    // The runtime's own budget (300 ms) passed long ago; the tool's (5 s) has 4 s left.
    const runtime = createRuntime({ tools: [tool], store, clock, inlineBudgetMs: 300 });
    await runtime.ready;
    await settle();
    expect(runs).toHaveLength(1);
    let answered: unknown;
    void runtime.call({ name: 'slow', sessionId: 's1', callId: 'slow_call' }).then((reply) => {
      answered = reply;
    });
    clock.increment(3_999);
    await settle();
    expect(answered).toBeUndefined();
    expect((await runtime.get('slow_call'))?.status).toBe('inline');
    clock.increment(1);
    await settle();
    expect(answered).toEqual({
      callId: 'slow_call',
      status: 'backgrounded',
      output: {
        status: 'running',
        tool: 'slow',
        call_id: 'slow_call',
        message: expect.stringContaining('5000'),
      },
    });
    expect((await runtime.get('slow_call'))?.status).toBe('backgrounded');
    runs[0]?.resolve('done');
    await settle();
    // Promoted, its end reaches the session as a notification.
    expect((await runtime.notifications.list()).map((n) => [n.callId, n.outcome])).toEqual([
      ['slow_call', 'succeeded'],
    ]);
    await runtime.close();
  });

  it('recovers an instance whose heartbeat is older than its lease, and leaves a live one alone', async () => {
    const store = memoryStore();
    const clock = new SimulatedClock();
    clock.set(100_000);
    await orphans(
      store,
      [orphan('stale_call', 'unsafe', 'inline', { ownerId: 'stale' })],
      makeInstance({ id: 'stale', pid: process.pid, heartbeatAt: 90_000, leaseMs: 5_000 }),
    );
    await orphans(
      store,
      [orphan('live_call', 'unsafe', 'inline', { ownerId: 'live' })],
      makeInstance({ id: 'live', pid: process.pid, heartbeatAt: 99_000, leaseMs: 5_000 }),
    );
    const runtime = createRuntime({ tools, store, clock });
    await runtime.ready;
    await settle();
    expect((await runtime.get('stale_call'))?.error?.code).toBe('interrupted');
    expect((await runtime.get('live_call'))?.status).toBe('inline');
    // The live one stops beating after this runtime started: it is recovered while it runs.
    clock.increment(6_000);
    await settle();
    expect((await runtime.get('live_call'))?.error?.code).toBe('interrupted');
    await runtime.close();
  });

  it('takes up an orphan again at the next tick when a read fails while it is recovered, never leaving it owned and idle', async () => {
    runs.length = 0;
    const store = memoryStore();
    const clock = new SimulatedClock();
    await orphans(store, [orphan('flaky_read', 'safe', 'queued')]);
    vi.spyOn(store, 'listEvents').mockRejectedValueOnce(new Error('connection timeout'));
    const runtime = createRuntime({ tools, store, clock });
    await runtime.ready;
    await settle();
    // Claimed (it is this runtime's now), but not taken up: nobody else would ever run it.
    expect(await store.getCall('flaky_read')).toMatchObject({
      status: 'queued',
      ownerId: runtime.instanceId,
    });
    expect(runs).toEqual([]);
    clock.increment(2_500);
    await settle();
    expect(runs).toEqual(['flaky_read#1']);
    expect((await store.getCall('flaky_read'))?.status).toBe('succeeded');
    await runtime.close();
  });

  it('takes an instance with this process id but another boot for a process before this one, and recovers it at once', async () => {
    const store = memoryStore();
    const clock = new SimulatedClock();
    clock.set(100_000);
    // A restarted container: the dead process was PID 1 too, and its lease has not lapsed.
    await orphans(
      store,
      [orphan('before_restart', 'unsafe', 'inline', { ownerId: 'before' })],
      makeInstance({
        id: 'before',
        host: hostname(),
        pid: process.pid,
        boot: 'an-earlier-boot',
        heartbeatAt: 99_000,
      }),
    );
    const sibling = createRuntime({ tools, store, clock });
    await sibling.ready;
    const [siblingInstance] = (await store.listInstances()).filter(({ id }) => id === sibling.instanceId);
    expect(siblingInstance?.pid).toBe(process.pid);
    await orphans(
      store,
      [orphan('sibling_call', 'unsafe', 'inline', { ownerId: sibling.instanceId })],
      siblingInstance,
    );
    const runtime = createRuntime({ tools, store, clock });
    await runtime.ready;
    await settle();
    expect((await runtime.get('before_restart'))?.error?.code).toBe('interrupted');
    // Another runtime of this same process (same PID, same boot) is alive.
    expect((await store.getCall('sibling_call'))?.status).toBe('inline');
    await runtime.close();
    await sibling.close();
  });

  it('keeps its own heartbeat while open, and leaves nothing to recover when closed cleanly', async () => {
    const store = memoryStore();
    const clock = new SimulatedClock();
    const runtime = createRuntime({ tools, store, clock, leaseMs: 3_000 });
    await runtime.ready;
    clock.increment(1_000);
    await settle();
    expect(await store.listInstances()).toEqual([
      expect.objectContaining({
        id: runtime.instanceId,
        pid: process.pid,
        heartbeatAt: 1_000,
        leaseMs: 3_000,
      }),
    ]);
    await runtime.close();
    expect(await store.listInstances()).toEqual([]);
  });
});

/** A store whose writes fail while `failing` is set: the fault the runtime must survive. */
class FaultyStore implements Store {
  failing = false;
  readonly #inner = memoryStore();
  async write(batch: Parameters<Store['write']>[0]): Promise<void> {
    if (this.failing) throw new Error('disk I/O error');
    return this.#inner.write(batch);
  }
  getCall: Store['getCall'] = (...args) => this.#inner.getCall(...args);
  listCalls: Store['listCalls'] = (...args) => this.#inner.listCalls(...args);
  listEvents: Store['listEvents'] = (...args) => this.#inner.listEvents(...args);
  listSessionEvents: Store['listSessionEvents'] = (...args) => this.#inner.listSessionEvents(...args);
  listNotifications: Store['listNotifications'] = (...args) => this.#inner.listNotifications(...args);
  getCalls: Store['getCalls'] = (...args) => this.#inner.getCalls(...args);
  countNotifications: Store['countNotifications'] = (...args) => this.#inner.countNotifications(...args);
  acknowledgeNotification: Store['acknowledgeNotification'] = (...args) =>
    this.#inner.acknowledgeNotification(...args);
  holdNotifications: Store['holdNotifications'] = (...args) => this.#inner.holdNotifications(...args);
  releaseNotifications: Store['releaseNotifications'] = (...args) =>
    this.#inner.releaseNotifications(...args);
  getArtifact: Store['getArtifact'] = (...args) => this.#inner.getArtifact(...args);
  listArtifacts: Store['listArtifacts'] = (...args) => this.#inner.listArtifacts(...args);
  listSteps: Store['listSteps'] = (...args) => this.#inner.listSteps(...args);
  getResolution: Store['getResolution'] = (...args) => this.#inner.getResolution(...args);
  listSchedules: Store['listSchedules'] = (...args) => this.#inner.listSchedules(...args);
  claimFiring: Store['claimFiring'] = (...args) => this.#inner.claimFiring(...args);
  deleteEndedBefore: Store['deleteEndedBefore'] = (...args) => this.#inner.deleteEndedBefore(...args);
  registerInstance: Store['registerInstance'] = (...args) => this.#inner.registerInstance(...args);
  heartbeat: Store['heartbeat'] = (...args) => this.#inner.heartbeat(...args);
  listInstances: Store['listInstances'] = (...args) => this.#inner.listInstances(...args);
  removeInstance: Store['removeInstance'] = (...args) => this.#inner.removeInstance(...args);
  claimCalls: Store['claimCalls'] = (...args) => this.#inner.claimCalls(...args);
  claimQueued: Store['claimQueued'] = (...args) => this.#inner.claimQueued(...args);
  queueDepth: Store['queueDepth'] = () => this.#inner.queueDepth();
  claimDeliveries: Store['claimDeliveries'] = (...args) => this.#inner.claimDeliveries(...args);
  settleDelivery: Store['settleDelivery'] = (...args) => this.#inner.settleDelivery(...args);
  listDeliveries: Store['listDeliveries'] = (...args) => this.#inner.listDeliveries(...args);
  countDeliveries: Store['countDeliveries'] = (...args) => this.#inner.countDeliveries(...args);
  close: Store['close'] = () => this.#inner.close();
}

describe('a store whose writes fail', () => {
  it('gives persistence_failed for a backgrounded reply it cannot save, and aborts the execution', async () => {
    const store = new FaultyStore();
    const { tool, runs } = gatedTool('slow', { mode: 'auto' });
    const { runtime, clock } = testRuntime([tool], { store });
    await runtime.ready;
    const pending = runtime.call({ name: 'slow', sessionId: 's' });
    await settle();
    store.failing = true;
    clock.increment(300);
    const reply = await pending;
    expect(reply).toMatchObject({
      status: 'failed',
      error: { code: 'persistence_failed', message: 'The call could not be saved: disk I/O error' },
    });
    expect(runs[0]?.signal.aborted).toBe(true);
    expect(runtime.stats().active).toBe(0);
  });

  it('ends a call that was still queued when its write failed, instead of leaving it in the queue', async () => {
    const store = new FaultyStore();
    const { tool, runs } = gatedTool('slow', { mode: 'background' });
    const { runtime } = testRuntime([tool], { store, limits: { concurrency: 1 } });
    await runtime.ready;
    await runtime.call({ name: 'slow', sessionId: 's', callId: 'running' });
    store.failing = true;
    const queued = await runtime.call({ name: 'slow', sessionId: 's', callId: 'waiting' });
    expect(queued.error?.code).toBe('persistence_failed');
    await settle();
    expect(runtime.stats()).toMatchObject({ queued: 0, running: 1, active: 1 });
    store.failing = false;
    runs[0]?.resolve('done');
    await settle();
    expect(runs).toHaveLength(1);
  });

  it('writes the end of a background call again until it lands, never leaving it backgrounded', async () => {
    const store = new FaultyStore();
    const { tool, runs } = gatedTool('slow', { mode: 'background' });
    const { runtime, clock } = testRuntime([tool], { store });
    await runtime.ready;
    const reply = await runtime.call({ name: 'slow', sessionId: 's' });
    expect(reply.status).toBe('backgrounded');
    store.failing = true;
    runs[0]?.resolve('done');
    await settle();
    expect((await store.getCall(reply.callId))?.status).toBe('backgrounded');
    // The disk is full for a while: each try fails, each after a longer wait.
    for (const ms of [100, 200, 400]) {
      clock.increment(ms);
      await settle();
    }
    expect((await store.getCall(reply.callId))?.status).toBe('backgrounded');
    store.failing = false;
    clock.increment(800);
    await settle();
    expect(await store.getCall(reply.callId)).toMatchObject({
      status: 'failed',
      error: { code: 'persistence_failed', message: 'The call could not be saved: disk I/O error' },
    });
    const notifications = await store.listNotifications({ sessionId: 's' });
    expect(notifications.map((notification) => [notification.callId, notification.outcome])).toEqual([
      [reply.callId, 'failed'],
    ]);
    expect(runtime.stats().active).toBe(0);
  });

  it('gives persistence_failed for an inline reply, and takes calls again once the store recovers', async () => {
    const store = new FaultyStore();
    const echo = defineTool({ name: 'echo', description: 'e', input: z.object({}), execute: () => 'ok' });
    const { runtime } = testRuntime([echo], { store });
    await runtime.ready;
    store.failing = true;
    expect((await runtime.call({ name: 'echo', sessionId: 's' })).error?.code).toBe('persistence_failed');
    expect((await runtime.call({ name: 'nope', sessionId: 's' })).error?.code).toBe('persistence_failed');
    store.failing = false;
    expect((await runtime.call({ name: 'echo', sessionId: 's' })).status).toBe('succeeded');
  });
});

describe('a store whose reads fail', () => {
  it('answers a call whose id cannot be looked up with persistence_failed, without running it', async () => {
    const store = memoryStore();
    let runs = 0;
    const tool = defineTool({ name: 'once', description: 'o', input: z.object({}), execute: () => ++runs });
    const { runtime } = testRuntime([tool], { store });
    vi.spyOn(store, 'getCall').mockRejectedValue(new Error('disk gone'));
    const reply = await runtime.call({ name: 'once', sessionId: 's', callId: 'c1' });
    expect(reply.error).toEqual({
      code: 'persistence_failed',
      message: 'The call could not be saved: disk gone',
    });
    expect(runs).toBe(0);
  });
});

describe('retention and replay', () => {
  it('removes ended calls after their time to live, and keeps running ones', async () => {
    const echo = defineTool({ name: 'echo', description: 'e', input: z.object({}), execute: () => 'ok' });
    const { tool } = gatedTool('slow', { mode: 'background' });
    const { runtime, clock } = testRuntime([echo, tool], { retention: { endedTtlMs: 10_000 } });
    const ended = await runtime.call({ name: 'echo', sessionId: 's' });
    const running = await runtime.call({ name: 'slow', sessionId: 's' });
    clock.increment(10_000);
    await settle();
    expect(await runtime.get(ended.callId)).toBeDefined();
    clock.increment(10_000);
    await settle();
    expect(await runtime.get(ended.callId)).toBeUndefined();
    expect(await storedEvents(runtime, ended.callId)).toEqual([]);
    expect((await runtime.get(running.callId))?.status).toBe('backgrounded');
  });

  it('removes a large backlog in batches of 500, each its own write, with turns of the loop between', async () => {
    const echo = defineTool({ name: 'echo', description: 'e', input: z.object({}), execute: () => 'ok' });
    const store = memoryStore();
    const batches: number[] = [];
    const remove = store.deleteEndedBefore.bind(store);
    store.deleteEndedBefore = async (time, limit) => {
      const removed = await remove(time, limit);
      batches.push(removed);
      return removed;
    };
    const { runtime, clock } = testRuntime([echo], { store, retention: { endedTtlMs: 60_000 } });
    for (let i = 0; i < 1_200; i++) await runtime.call({ name: 'echo', sessionId: `s${i % 7}` });
    clock.increment(120_000);
    for (let turn = 0; turn < 10; turn++) await settle();
    expect(batches.filter((removed) => removed > 0)).toEqual([500, 500, 200]);
    expect((await store.listCalls({ limit: 1_000 })).calls).toEqual([]);
  });

  it('replays the stored events of a call from any seq', async () => {
    const echo = defineTool({ name: 'echo', description: 'e', input: z.object({}), execute: () => 'ok' });
    const { runtime, events } = testRuntime([echo]);
    const reply = await runtime.call({ name: 'echo', sessionId: 's' });
    expect(await storedEvents(runtime, reply.callId)).toEqual(
      events.filter((event) => event.callId === reply.callId),
    );
    expect((await storedEvents(runtime, reply.callId, 2)).map((event) => event.type)).toEqual([
      'started',
      'succeeded',
    ]);
    expect(typesOf(events, reply.callId)).toEqual(['queued', 'started', 'succeeded']);
  });
});
