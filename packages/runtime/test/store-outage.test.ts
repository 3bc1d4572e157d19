import { defineTool } from '@baton/contracts';
import { memoryStore, type StoreWrite } from '@baton/store';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createRuntime, type Runtime } from '../src/index.js';
import { deferred, SimulatedClock } from '../src/testing.js';
import { AWAY, pass, storeThatGoesAway } from './store-that-goes-away.js';

const echo = defineTool({
  name: 'echo',
  description: 'Echoes',
  input: z.object({ text: z.string() }),
  execute: ({ text }) => text,
});

/** A call in the background that ends when the test says. */
const report = { halfway: deferred(), done: deferred<string>() };
const slowReport = defineTool({
  name: 'slow_report',
  description: 'Reports, in the background',
  input: z.object({}),
  execution: { mode: 'background' },
  async execute(_, ctx) {
    await report.halfway.promise;
    ctx.status('halfway');
    return report.done.promise;
  },
});

async function started(options: { storeRetryMs?: number } = {}) {
  const clock = new SimulatedClock();
  const { store, state } = storeThatGoesAway();
  report.halfway = deferred();
  report.done = deferred<string>();
  const runtime: Runtime = createRuntime({
    tools: [echo, slowReport],
    store,
    clock,
    inlineBudgetMs: 60_000,
    ...options,
  });
  await runtime.ready;
  return { runtime, clock, state };
}

const TERMINAL = ['succeeded', 'failed', 'cancelled', 'timed_out'];

describe('a store that goes away for a while', () => {
  it('keeps a call made while it is away waiting, and answers it once the store is back', async () => {
    const { runtime, clock, state } = await started();
    state.away = true;
    let reply: unknown;
    const calling = runtime.call({ name: 'echo', args: { text: 'hi' }, sessionId: 's' }).then((answer) => {
      reply = answer;
    });
    await pass(clock, 5_000);
    expect(reply).toBeUndefined();
    const triedWhileAway = state.requests;
    state.away = false;
    await pass(clock, 1_000);
    await calling;
    expect(reply).toMatchObject({ status: 'succeeded', output: 'hi' });
    // Backoff: tens of tries in five seconds, not thousands.
    expect(triedWhileAway).toBeLessThan(60);
    expect(await runtime.get((reply as { callId: string }).callId)).toMatchObject({ status: 'succeeded' });
  });

  it('rides a read out as well: get answers once the store is back', async () => {
    const { runtime, clock, state } = await started();
    const { callId } = await runtime.call({ name: 'echo', args: { text: 'kept' }, sessionId: 's' });
    state.away = true;
    let record: unknown;
    const reading = runtime.get(`${callId}-unknown`).then(() => runtime.get(callId));
    void reading.then((found) => {
      record = found;
    });
    await pass(clock, 2_000);
    expect(record).toBeUndefined();
    state.away = false;
    await pass(clock, 1_000);
    expect(await reading).toMatchObject({ callId, status: 'succeeded' });
  });

  it('fails an accepted call with persistence_failed once the store stays away past storeRetryMs; not kept, it leaves its id free', async () => {
    const { runtime, clock, state } = await started({ storeRetryMs: 3_000 });
    state.away = true;
    const reply = runtime.call({ name: 'echo', args: { text: 'lost' }, sessionId: 's', callId: 'c1' });
    await pass(clock, 3_500);
    expect(await reply).toMatchObject({
      status: 'failed',
      error: { code: 'persistence_failed', message: expect.stringContaining(AWAY) },
    });
    state.away = false;
    await pass(clock, 6_000);
    // Nothing was kept under its id, nor is later: the same call again runs.
    expect(await runtime.get('c1')).toBeUndefined();
    expect(
      await runtime.call({ name: 'echo', args: { text: 'again' }, sessionId: 's', callId: 'c1' }),
    ).toMatchObject({
      status: 'succeeded',
      output: 'again',
    });
  });

  it('takes a write whose answer was lost, made again, as written: the call ends once, with one notification', async () => {
    const { runtime, clock, state } = await started();
    const { callId, status } = await runtime.call({ name: 'slow_report', args: {}, sessionId: 's' });
    expect(status).toBe('backgrounded');
    // The end is stored, and its answer lost on the way back: the runtime cannot tell, and writes it again.
    let lost = 0;
    state.loseAnswer = (write) => (write.notifications?.length ?? 0) > 0 && lost++ === 0;
    report.halfway.resolve();
    report.done.resolve('the report');
    await pass(clock, 1_000);
    expect(lost).toBe(2);
    expect(await runtime.get(callId)).toMatchObject({ status: 'succeeded', output: 'the report' });
    const events = await runtime.replay(callId);
    expect(events.filter((event) => TERMINAL.includes(event.type)).map((event) => event.type)).toEqual([
      'succeeded',
    ]);
    expect(await runtime.notifications.list({ sessionId: 's' })).toMatchObject([
      { callId, outcome: 'succeeded' },
    ]);
  });

  it('writes a batch again as it left, not as its calls are by then', async () => {
    const { runtime, clock, state } = await started();
    const { callId } = await runtime.call({ name: 'slow_report', args: {}, sessionId: 's' });
    state.away = true;
    const before = state.writes.length;
    // The call's status is written while the store is away; the call ends meanwhile.
    report.halfway.resolve();
    await pass(clock, 200);
    report.done.resolve('ended while away');
    await pass(clock, 200);
    state.away = false;
    await pass(clock, 2_000);
    const attempts = state.writes.slice(before).map((write) => JSON.parse(write) as StoreWrite);
    const first = attempts[0];
    expect(first?.calls).toMatchObject([{ callId, status: 'backgrounded', statusText: 'halfway' }]);
    // The first batch, made again until the store took it, each time as it left; then the end.
    const again = attempts.filter((attempt) => JSON.stringify(attempt) === JSON.stringify(first));
    expect(again.length).toBeGreaterThan(2);
    expect(attempts.slice(again.length).map((attempt) => attempt.calls?.[0]?.status)).toEqual(['succeeded']);
    expect(await runtime.get(callId)).toMatchObject({ status: 'succeeded', output: 'ended while away' });
    expect(
      (await runtime.replay(callId))
        .filter((event) => TERMINAL.includes(event.type))
        .map((event) => event.type),
    ).toEqual(['succeeded']);
    expect(await runtime.notifications.list({ sessionId: 's' })).toMatchObject([{ callId }]);
  });

  it('refuses a batch whole, without splitting it, when the store is still away past storeRetryMs', async () => {
    const { runtime, clock, state } = await started({ storeRetryMs: 3_000 });
    state.away = true;
    const before = state.writes.length;
    const replies = Promise.all(
      ['a', 'b', 'c', 'd'].map((text) => runtime.call({ name: 'echo', args: { text }, sessionId: 's' })),
    );
    await pass(clock, 3_500);
    expect((await replies).map((reply) => reply.error?.code)).toEqual(Array(4).fill('persistence_failed'));
    // Every write asked for held the four calls: none was cut in halves to find a refused one.
    const asked = state.writes.slice(before, before + 10).map((write) => JSON.parse(write) as StoreWrite);
    expect(asked.length).toBeGreaterThan(1);
    for (const write of asked) expect(write.calls?.length).toBe(4);
  });

  it('does not ride out with storeRetryMs 0: the error comes at once', async () => {
    const { runtime, state } = await started({ storeRetryMs: 0 });
    state.away = true;
    await expect(runtime.get('any')).rejects.toThrow(AWAY);
  });

  it('tells a store that cannot be reached at start at once, without riding it out', async () => {
    const clock = new SimulatedClock();
    const { store, state } = storeThatGoesAway();
    state.away = true;
    const runtime = createRuntime({ tools: [echo], store, clock });
    await expect(runtime.ready).rejects.toThrow(AWAY);
  });
});

describe('two runtimes on one store that goes away for longer than a lease', () => {
  /** Two runtimes on one store, each reaching it through its own connection, which goes away with it. */
  async function twoRuntimes() {
    const clock = new SimulatedClock();
    const kept = memoryStore();
    const a = storeThatGoesAway(kept);
    const b = storeThatGoesAway(kept);
    report.halfway = deferred();
    report.done = deferred<string>();
    const options = { tools: [echo, slowReport], clock, leaseMs: 5_000, storeRetryMs: 15_000 };
    const owner = createRuntime({ ...options, store: a.store });
    const other = createRuntime({ ...options, store: b.store });
    await Promise.all([owner.ready, other.ready]);
    const away = (yes: boolean) => {
      a.state.away = yes;
      b.state.away = yes;
    };
    return { clock, kept, owner, other, away };
  }

  it('takes over no call of a live instance that rode it out: an 8 s outage interrupts and re-runs nothing', async () => {
    const { clock, kept, owner, other, away } = await twoRuntimes();
    const { callId } = await owner.call({ name: 'slow_report', args: {}, sessionId: 's' });
    await pass(clock, 1_000);
    away(true);
    await pass(clock, 8_000);
    away(false);
    // Time for every heartbeat and recovery to run after the store is back.
    await pass(clock, 6_000);
    expect((await kept.getCall(callId))?.ownerId).toBe(owner.instanceId);
    report.halfway.resolve();
    report.done.resolve('once');
    await pass(clock, 1_000);
    const events = await kept.listEvents(callId);
    expect(events.filter((event) => TERMINAL.includes(event.type)).map((event) => event.type)).toEqual([
      'succeeded',
    ]);
    expect(events.filter((event) => event.type === 'started')).toHaveLength(1);
    expect(await kept.listNotifications({ sessionId: 's' })).toMatchObject([
      { callId, outcome: 'succeeded' },
    ]);
    await Promise.all([owner.close(), other.close()]);
  });

  it('declares its lease and its ride-out as the time its calls stay its own', async () => {
    const { kept, owner, other } = await twoRuntimes();
    expect((await kept.listInstances()).map((instance) => instance.leaseMs)).toEqual([20_000, 20_000]);
    await Promise.all([owner.close(), other.close()]);
  });

  it('follows the recovery rules past the lease and the ride-out: the call is taken up by the other', async () => {
    const { clock, kept, owner, other, away } = await twoRuntimes();
    const { callId } = await owner.call({ name: 'slow_report', args: {}, sessionId: 's' });
    await pass(clock, 1_000);
    away(true);
    await pass(clock, 25_000);
    away(false);
    await pass(clock, 3_000);
    // A non-idempotent call another process took up ends interrupted, once.
    const record = await kept.getCall(callId);
    expect(record?.ownerId).toBe(other.instanceId);
    expect(record).toMatchObject({ status: 'failed', error: { code: 'interrupted' } });
    report.halfway.resolve();
    report.done.resolve('too late');
    await pass(clock, 1_000);
    expect((await kept.getCall(callId))?.status).toBe('failed');
    const events = await kept.listEvents(callId);
    expect(events.filter((event) => TERMINAL.includes(event.type)).map((event) => event.type)).toEqual([
      'failed',
    ]);
    await Promise.all([owner.close(), other.close()]);
  });
});

describe('after an outage, the calls the store says this worker holds', () => {
  it('takes up none that ended while the read of them was out: an idempotent call runs once', async () => {
    const clock = new SimulatedClock();
    const kept = memoryStore();
    const { store, state } = storeThatGoesAway(kept);
    let runs = 0;
    const gate = deferred<string>();
    const crawl = defineTool({
      name: 'crawl',
      description: 'Crawls, in the background',
      input: z.object({}),
      execution: { mode: 'background', idempotent: true },
      async execute() {
        runs++;
        return runs === 1 ? gate.promise : 'crawled again';
      },
    });
    // The read of what this worker holds answers with what was so when it began: the call ends
    // and its end is written while the answer is on its way.
    let staleRead: (() => Promise<void>) | undefined;
    Object.defineProperty(store, 'heldBy', {
      value: async (ownerId: string) => {
        const before = (await kept.heldBy?.(ownerId)) ?? [];
        await staleRead?.();
        return before;
      },
    });
    const runtime = createRuntime({ tools: [crawl], store, clock, inlineBudgetMs: 300 });
    await runtime.ready;
    const { callId } = await runtime.call({ name: 'crawl', args: {}, sessionId: 's' });
    await pass(clock, 1_000);
    staleRead = async () => {
      staleRead = undefined;
      gate.resolve('crawled');
      while ((await kept.getCall(callId))?.status !== 'succeeded') await pass(clock, 50);
    };
    // A short outage: the store's troubles are counted, and the next heartbeat retakes what is held.
    state.away = true;
    await pass(clock, 3_000);
    state.away = false;
    await pass(clock, 6_000);
    expect(staleRead).toBeUndefined();
    expect(runs).toBe(1);
    expect(await kept.getCall(callId)).toMatchObject({ status: 'succeeded', result: 'crawled', attempt: 1 });
    const events = await kept.listEvents(callId);
    expect(events.filter((event) => event.type === 'started')).toHaveLength(1);
    await runtime.close();
  });
});

describe('what an outage ridden out logs', () => {
  it('warns, and logs no error: no call failed, nothing was lost', async () => {
    const clock = new SimulatedClock();
    const { store, state } = storeThatGoesAway();
    const lines: Array<{ level: string; op?: string }> = [];
    const logAt =
      (level: string) =>
      (fields: object): void => {
        lines.push({ level, op: (fields as { op?: string }).op });
      };
    const logger = { error: logAt('error'), warn: logAt('warn'), info: logAt('info'), debug: logAt('debug') };
    report.halfway = deferred();
    report.done = deferred<string>();
    const runtime = createRuntime({ tools: [echo, slowReport], store, clock, logger, storeRetryMs: 15_000 });
    const failures: Array<{ op: string; retried?: true }> = [];
    runtime.failures$.subscribe(({ op, retried }) => failures.push({ op, ...(retried ? { retried } : {}) }));
    await runtime.ready;
    const { callId } = await runtime.call({ name: 'slow_report', args: {}, sessionId: 's' });
    state.away = true;
    const during = runtime.call({ name: 'echo', args: { text: 'through it' }, sessionId: 's' });
    await pass(clock, 8_000);
    state.away = false;
    await pass(clock, 2_000);
    expect(await during).toMatchObject({ status: 'succeeded', output: 'through it' });
    report.halfway.resolve();
    report.done.resolve('done');
    await pass(clock, 1_000);
    expect((await runtime.get(callId))?.status).toBe('succeeded');
    expect(lines.filter((line) => line.level === 'error')).toEqual([]);
    expect(lines.filter((line) => line.level === 'warn').length).toBeGreaterThan(0);
    expect(failures.length).toBeGreaterThan(0);
    expect(failures.filter((failure) => !failure.retried)).toEqual([]);
    await runtime.close();
  });
});
