import { defineTool } from '@baton/contracts';
import { memoryStore, type Store } from '@baton/store';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createRuntime, type Runtime } from '../src/index.js';
import { SimulatedClock } from '../src/testing.js';
import { settle } from './helpers.js';

const AWAY = 'connect ECONNREFUSED 127.0.0.1:5432';

/**
 * A store that can go away: while `away`, every request fails as a database that cannot be
 * reached does, and says so through `isUnavailable`.
 */
function storeThatGoesAway() {
  const kept = memoryStore();
  const state = { away: false, requests: 0 };
  const store = Object.create(kept) as Store;
  for (const name of ['write', 'getCall', 'listCalls', 'heartbeat', 'registerInstance'] as const) {
    const method = kept[name] as (...args: unknown[]) => Promise<unknown>;
    Object.defineProperty(store, name, {
      value: async (...args: unknown[]) => {
        state.requests++;
        if (state.away) throw Object.assign(new Error(AWAY), { code: 'ECONNREFUSED' });
        return method.apply(kept, args);
      },
    });
  }
  Object.defineProperty(store, 'isUnavailable', {
    value: (error: unknown) => (error as { code?: string }).code === 'ECONNREFUSED',
  });
  return { store, state };
}

const echo = defineTool({
  name: 'echo',
  description: 'Echoes',
  input: z.object({ text: z.string() }),
  execute: ({ text }) => text,
});

/** Moves the simulated clock on in small steps, letting the runtime's promises run between them. */
async function pass(clock: SimulatedClock, ms: number): Promise<void> {
  for (let elapsed = 0; elapsed < ms; elapsed += 50) {
    clock.increment(50);
    await settle();
  }
}

async function started(options: { storeRetryMs?: number } = {}) {
  const clock = new SimulatedClock();
  const { store, state } = storeThatGoesAway();
  const runtime: Runtime = createRuntime({ tools: [echo], store, clock, inlineBudgetMs: 60_000, ...options });
  await runtime.ready;
  return { runtime, clock, state };
}

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

  it('fails an accepted call with persistence_failed once the store stays away past storeRetryMs', async () => {
    const { runtime, clock, state } = await started({ storeRetryMs: 3_000 });
    state.away = true;
    const reply = runtime.call({ name: 'echo', args: { text: 'lost' }, sessionId: 's' });
    await pass(clock, 3_500);
    expect(await reply).toMatchObject({
      status: 'failed',
      error: { code: 'persistence_failed', message: expect.stringContaining(AWAY) },
    });
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
