import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineTool, isBatonError } from '@baton/contracts';
import { memoryStore, type Store } from '@baton/store';
import { sqliteStore } from '@baton/store-sqlite';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createRuntime } from '../src/index.js';
import { deferred, SimulatedClock } from '../src/testing.js';
import { gatedTool, settle, testRuntime } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'baton-drain-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('close({ drainMs }): deploys drain, nothing is cancelled', () => {
  it('takes no new call, lets the live ones end within the drain, and ends the rest in memory `interrupted`', async () => {
    const { tool, runs } = gatedTool('work');
    const { runtime, clock, events } = testRuntime([tool]);
    const quick = runtime.call({ name: 'work', sessionId: 's', callId: 'quick' });
    const slow = runtime.call({ name: 'work', sessionId: 's', callId: 'slow' });
    await settle();
    const closing = runtime.close({ drainMs: 30_000 });
    expect(runtime.closing).toBe(true);
    expect(await runtime.call({ name: 'work', sessionId: 's', callId: 'late' })).toMatchObject({
      status: 'failed',
      error: { code: 'closed' },
    });
    clock.increment(10_000);
    runs[0]?.resolve('done in time');
    expect(await quick).toMatchObject({ status: 'succeeded', output: 'done in time' });
    clock.increment(20_000);
    await closing;
    expect(await slow).toMatchObject({ status: 'failed', error: { code: 'interrupted' } });
    expect(runs[1]?.signal.aborted).toBe(true);
    expect(events.filter((event) => event.type === 'cancelled')).toEqual([]);
  });

  it('ends the drain as soon as the last live call ends', async () => {
    const { tool, runs } = gatedTool('work');
    const { runtime } = testRuntime([tool]);
    const call = runtime.call({ name: 'work', sessionId: 's' });
    await settle();
    let closed = false;
    const closing = runtime.close({ drainMs: 60_000 }).then(() => {
      closed = true;
    });
    await settle();
    expect(closed).toBe(false);
    runs[0]?.resolve('ok');
    await closing;
    expect(await call).toMatchObject({ status: 'succeeded' });
  });

  it('alone on SQLite, waits only for what cannot be handed over without loss: idempotent background calls go to the next start at once', async () => {
    const path = join(dir, 'alone.db');
    const research = gatedTool('research', { mode: 'background', idempotent: true });
    const charge = gatedTool('charge', { mode: 'background', idempotent: false });
    const clock = new SimulatedClock();
    const store = sqliteStore({ path });
    const runtime = createRuntime({ tools: [research.tool, charge.tool], store, clock });
    await runtime.call({ name: 'research', sessionId: 's', callId: 'r1' });
    await runtime.call({ name: 'charge', sessionId: 's', callId: 'c1' });
    await settle();
    let closed = false;
    const closing = runtime.close({ drainMs: 60_000 }).then(() => {
      closed = true;
    });
    await settle();
    // The charge may not run again: the drain waits for it, and for it alone.
    expect(closed).toBe(false);
    charge.runs[0]?.resolve('charged');
    await closing;
    expect(research.runs[0]?.signal.aborted).toBe(true);
    const reopened = sqliteStore({ path });
    expect(await reopened.getCall('c1')).toMatchObject({ status: 'succeeded' });
    expect((await reopened.getCall('r1'))?.status).toBe('backgrounded');
    await reopened.close();
  });

  it('hands over on SQLite what still runs: its caller hears it goes on in the background, and the next start takes it up', async () => {
    const path = join(dir, 'handover.db');
    let runsOfCharge = 0;
    const chargeStarted = deferred<void>();
    const research = gatedTool('research', { mode: 'auto', idempotent: true });
    const charge = defineTool({
      name: 'charge',
      description: 'Charges a card: must not run twice',
      input: z.object({}),
      execute: async () => {
        runsOfCharge++;
        chargeStarted.resolve();
        await deferred<void>().promise;
      },
    });
    const clock = new SimulatedClock();
    // A budget longer than the drain: both callers still wait when the runtime stops.
    const first = createRuntime({
      tools: [research.tool, charge],
      store: sqliteStore({ path }),
      clock,
      inlineBudgetMs: 60_000,
    });
    const waiting = first.call({ name: 'research', args: { topic: 'tides' }, sessionId: 's', callId: 'r1' });
    const charging = first.call({ name: 'charge', sessionId: 's', callId: 'c1' });
    // Both run (the charge once its start is stored) when the runtime is told to stop.
    await chargeStarted.promise;
    await settle();
    expect(research.runs).toHaveLength(1);
    const closing = first.close({ drainMs: 1_000 });
    clock.increment(1_000);
    await closing;
    // The callers were waiting inline: they hear at once that their calls go on.
    for (const reply of [await waiting, await charging]) {
      expect(reply).toMatchObject({
        status: 'backgrounded',
        output: { message: expect.stringContaining('The service running this tool is restarting') },
      });
    }
    expect(research.runs[0]?.signal.aborted).toBe(true);

    // Later, on a clock past the first's lease and ride-out (which its close let lapse).
    const secondClock = new SimulatedClock();
    secondClock.set(30_000);
    const second = createRuntime({
      tools: [research.tool, charge],
      store: sqliteStore({ path }),
      clock: secondClock,
    });
    try {
      await second.ready;
      await settle();
      // The idempotent call runs again; the other ends `interrupted`, having run once.
      research.runs[1]?.resolve('high tide at noon');
      await settle();
      expect(await second.get('r1')).toMatchObject({ status: 'succeeded', detached: true, attempt: 2 });
      expect(await second.get('c1')).toMatchObject({ status: 'failed', error: { code: 'interrupted' } });
      expect(runsOfCharge).toBe(1);
      // Their ends reach their session as notifications.
      expect((await second.notifications.list({ sessionId: 's' })).map((n) => [n.callId, n.outcome])).toEqual(
        [
          ['c1', 'failed'],
          ['r1', 'succeeded'],
        ],
      );
    } finally {
      await second.close();
    }
  });
});

describe('a request under way when the runtime closes', () => {
  it('is answered before the store is closed, never refused by a closed pool: a message sent as the process drains', async () => {
    const gate = deferred<void>();
    let closed = false;
    const kept = memoryStore();
    // A store whose reads wait while the test holds them, and that refuses everything once closed.
    const store = Object.assign(Object.create(kept), {
      async getResolution(key: string) {
        await gate.promise;
        if (closed) throw new Error('Cannot use a pool after calling end on the pool');
        return kept.getResolution(key);
      },
      async close() {
        closed = true;
        await kept.close();
      },
    }) as Store;
    const steered = defineTool({
      name: 'steered',
      description: 'Reads one message',
      input: z.object({}),
      messages: z.string(),
      execution: { mode: 'background' },
      execute: async (_args, ctx) => ctx.nextMessage(),
    });
    const { runtime } = testRuntime([steered], { store });
    const { callId } = await runtime.call({ name: 'steered', args: {}, sessionId: 's' });
    const sending = runtime.steer(callId, 'moon');
    await settle();
    const closing = runtime.close();
    await settle();
    expect(closed).toBe(false);
    gate.resolve();
    // Answered before the store closed: here the call ended in the close without reading it (a
    // store that keeps nothing past the process), so the message is refused as one sent after.
    const answer = await sending.then(
      (receipt) => receipt,
      (error: unknown) => (isBatonError(error) ? error.code : error),
    );
    expect(answer).toBe('call_ended');
    await closing;
    expect(closed).toBe(true);
  });
});
