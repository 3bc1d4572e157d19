import { defineTool } from '@baton/contracts';
import { memoryStore } from '@baton/store';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createRuntime } from '../src/index.js';
import { SimulatedClock } from '../src/testing.js';
import { gatedTool, settle } from './helpers.js';

const collect = (globalThis as { gc?: () => void }).gc;

function heapAfterCollection(): number {
  if (!collect) throw new Error('run with --expose-gc (see vitest.config.ts)');
  collect();
  collect();
  return process.memoryUsage().heapUsed;
}

describe('10,000 calls leave nothing behind', () => {
  it('no live calls, timers or bus routes, and the heap returns near its baseline', async () => {
    const store = memoryStore();
    const echo = defineTool({
      name: 'echo',
      description: 'e',
      input: z.object({ i: z.number() }),
      execute: ({ i }) => i,
    });
    const slow = gatedTool('slow', { mode: 'auto', timeoutMs: 10_000 });
    const clock = new SimulatedClock();
    // Not the recording test runtime of the other tests: its event log would be the only leak seen.
    const runtime = createRuntime({ tools: [echo, slow.tool], store, clock });

    // Each round: fast inline calls watched per call, auto calls promoted then finished, one
    // cancelled, one timed out; then the ended records are purged so only leaks would remain.
    const round = async (calls: number) => {
      for (let i = 0; i < calls; i += 10) {
        const fast = Array.from({ length: 6 }, (_, k) =>
          runtime.call({ name: 'echo', args: { i: i + k }, sessionId: `s${i % 7}` }),
        );
        const watcher = runtime.callEvents$('watched').subscribe();
        const slowCalls = Array.from({ length: 4 }, () => runtime.call({ name: 'slow', sessionId: 'bg' }));
        clock.increment(300);
        const replies = await Promise.all([...fast, ...slowCalls]);
        watcher.unsubscribe();
        // Of the four slow calls: one succeeds, one fails, one is cancelled, one times out.
        const [succeeds, fails] = slow.runs.splice(0, 4);
        succeeds?.resolve({ i });
        fails?.reject(new Error('boom'));
        await runtime.cancel(replies[8]?.callId ?? '');
        clock.increment(10_000);
      }
      await settle();
      for (const notification of await runtime.notifications.list({ status: 'queued' })) {
        await runtime.notifications.ack(notification.id);
      }
      await store.deleteEndedBefore(Number.POSITIVE_INFINITY);
    };

    await round(1_000);
    const baseline = heapAfterCollection();
    await round(10_000);
    const after = heapAfterCollection();

    expect(runtime.stats()).toEqual({
      active: 0,
      running: 0,
      queued: 0,
      timers: 0,
      routes: 0,
      waitingForWorkers: 0,
    });
    expect((await runtime.list()).calls).toEqual([]);

    const bytesPerCall = (after - baseline) / 10_000;
    // A leaked actor alone would hold about 2 KB per call.
    expect(bytesPerCall).toBeLessThan(100);
    await runtime.close();
  }, 60_000);
});
