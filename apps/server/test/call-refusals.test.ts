import { defineTool } from '@baton/contracts';
import { createRuntime } from '@baton/runtime';
import { deferred, SimulatedClock } from '@baton/runtime/testing';
import { memoryStore, type Store } from '@baton/store';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createServer } from '../src/index.js';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const tools = [
  defineTool({
    name: 'echo',
    description: 'Returns its text.',
    input: z.object({ text: z.string() }),
    execute: ({ text }) => ({ text }),
  }),
  // What it prepares is no JSON: the store cannot keep it, and the call ends `persistence_failed`.
  defineTool({
    name: 'prepares_a_bigint',
    description: 'Prepares a value no store keeps.',
    input: z.object({}),
    prepare: () => ({ amount: 10n }),
    execute: () => ({ charged: true }),
  }),
];

/**
 * A server on a memory store whose writes fail while `refusing` is set, with no ride-out, and whose
 * reads of a call wait for `lookups` while it is set.
 */
async function serverOn() {
  const store = memoryStore();
  const state: { refusing: boolean; lookups?: Promise<void>; looking?: () => void } = { refusing: false };
  const refusing: Store = Object.assign(Object.create(store) as Store, {
    write: (...args: Parameters<Store['write']>) =>
      state.refusing ? Promise.reject(new Error('the disk is full')) : store.write(...args),
    getCall: async (callId: string) => {
      state.looking?.();
      await state.lookups;
      return store.getCall(callId);
    },
  });
  const runtime = createRuntime({ tools, store: refusing, storeRetryMs: 0, clock: new SimulatedClock() });
  await runtime.ready;
  const app = createServer({ runtime });
  cleanups.push(
    () => runtime.close(),
    () => app.close(),
  );
  const post = async (body: object) => {
    const response = await app.inject({ method: 'POST', url: '/v1/calls', payload: body });
    return { http: response.statusCode, retryAfter: response.headers['retry-after'], ...response.json() };
  };
  const get = async (callId: string) => (await app.inject(`/v1/calls/${callId}`)).statusCode;
  return { state, post, get, runtime, store };
}

describe('a POST whose call the store could not keep, or kept as ended persistence_failed', () => {
  it('a stored call that ended persistence_failed is answered its end, to every POST of its id, never "not kept"', async () => {
    const server = await serverOn();
    const body = { name: 'prepares_a_bigint', args: {}, sessionId: 's', callId: 'charge-1' };
    const first = await server.post(body);
    expect(first).toMatchObject({
      http: 200,
      callId: 'charge-1',
      status: 'failed',
      error: { code: 'persistence_failed' },
    });
    expect(await server.get('charge-1')).toBe(200);
    // A careful caller's retry hears the same end, not a 503 that asks it to come back forever.
    expect(await server.post(body)).toEqual(first);
  });

  it('a call not kept is answered 503 "not kept", leaves nothing, and its id works once the store takes writes', async () => {
    const server = await serverOn();
    server.state.refusing = true;
    const body = { name: 'echo', args: { text: 'hi' }, sessionId: 's', callId: 'echo-1' };
    expect(await server.post(body)).toMatchObject({
      http: 503,
      error: {
        code: 'store_unavailable',
        message: expect.stringMatching(/^the call was not kept: .*disk is full/),
      },
    });
    expect(await server.get('echo-1')).toBe(404);
    server.state.refusing = false;
    expect(await server.post(body)).toMatchObject({ http: 200, status: 'succeeded', output: { text: 'hi' } });
  });

  it('a call whose id is still looked up when the server begins to stop is answered 503 shutting_down, and nothing is kept', async () => {
    const server = await serverOn();
    const lookup = deferred<void>();
    server.state.lookups = lookup.promise;
    const looking = deferred<void>();
    server.state.looking = looking.resolve;
    const answer = server.post({ name: 'echo', args: { text: 'late' }, sessionId: 's', callId: 'late-1' });
    await looking.promise;
    const closed = server.runtime.close();
    lookup.resolve();
    expect(await answer).toMatchObject({
      http: 503,
      retryAfter: '5',
      error: { code: 'shutting_down', callId: 'late-1' },
    });
    await closed;
    expect(await server.store.getCall('late-1')).toBeUndefined();
  });
});

describe('a call the client refuses as it holds all it may', () => {
  it("is answered 429 overloaded with Retry-After and the runtime's words, and counted", async () => {
    const runtime = createRuntime({ tools, clock: new SimulatedClock() });
    await runtime.ready;
    const message = 'Too many calls are waiting for a worker here (the limit is 2): nothing was kept.';
    // The runtime of a client past its limit: every call is refused so.
    const overloaded = new Proxy(runtime, {
      get(target, key) {
        if (key === 'call') {
          return async ({ callId }: { callId: string }) => ({
            callId,
            status: 'failed',
            output: { error: message },
            error: { code: 'overloaded', message },
          });
        }
        const value = Reflect.get(target, key, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const app = createServer({ runtime: overloaded });
    cleanups.push(
      () => runtime.close(),
      () => app.close(),
    );
    const response = await app.inject({
      method: 'POST',
      url: '/v1/calls',
      payload: { name: 'echo', args: { text: 'hi' }, sessionId: 's', callId: 'c1' },
    });
    expect(response.statusCode).toBe(429);
    expect(response.headers['retry-after']).toBe('5');
    expect(response.json()).toEqual({ error: { code: 'overloaded', message, callId: 'c1' } });
    // Counted by its code, for an operator.
    const metrics = await app.inject('/metrics');
    expect(metrics.body).toMatch(/^baton_calls_refused_total\{code="overloaded"\} 1$/m);
  });
});
