import { type CallStatus, isTerminalStatus } from '@baton/contracts';
import { createRuntime } from '@baton/runtime';
import { storedEvents } from '@baton/runtime/testing';
import type { Store, StoreWrite } from '@baton/store';
import { postgresStore } from '@baton/store-postgres';
import { type ThrowawayPostgres, throwawayPostgres } from '@baton/store-postgres/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { distributedTools } from './tools.mjs';

let server: ThrowawayPostgres;
beforeAll(async () => {
  server = await throwawayPostgres();
}, 60_000);
afterAll(() => server.stop());

/** The store, counting how many of its writes were in flight at once, at most. */
function counted(store: Store) {
  const seen = { inFlight: 0, most: 0, writes: 0, largest: 0 };
  const counting: Store = Object.assign(Object.create(store), {
    async write(batch: StoreWrite) {
      seen.writes++;
      seen.largest = Math.max(seen.largest, batch.calls?.length ?? 0);
      seen.most = Math.max(seen.most, ++seen.inFlight);
      try {
        await store.write(batch);
      } finally {
        seen.inFlight--;
      }
    },
  });
  return { counting, seen };
}

describe('pipelined writes on PostgreSQL (writeConcurrency)', () => {
  it('has several batches in flight, and keeps each call’s events and record in order', {
    timeout: 120_000,
  }, async () => {
    const store = postgresStore({
      connectionString: server.url,
      schema: `pipelined_${process.pid}`,
      writeConcurrency: 4,
    });
    expect(store.writeConcurrency).toBe(4);
    const { counting, seen } = counted(store);
    const runtime = createRuntime({ tools: distributedTools, store: counting, inlineBudgetMs: 60_000 });
    await runtime.ready;
    try {
      const replies = await Promise.all(
        Array.from({ length: 1_000 }, (_, i) =>
          i % 2 === 0
            ? runtime.call({ name: 'echo', args: { text: `#${i}` }, sessionId: `s${i % 7}` })
            : runtime.call({ name: 'sleepy', args: { ms: (i % 50) * 2 }, sessionId: `s${i % 7}` }),
        ),
      );
      expect(replies.filter((reply) => reply.status !== 'succeeded')).toEqual([]);
      expect(seen.most).toBeGreaterThan(1);
      expect(seen.most).toBeLessThanOrEqual(4);
      // A tick of up to 1,000 calls is cut into batches of 250 (the default writeBatchCalls).
      expect(seen.largest).toBeLessThanOrEqual(250);
      // Every call's stored events run 1, 2, 3... and end with its one terminal event; its record
      // is the end, not an earlier state written after it.
      for (const reply of replies.filter((_, i) => i % 50 === 1)) {
        const events = await storedEvents(runtime, reply.callId);
        expect(events.map((event) => event.seq)).toEqual(events.map((_, i) => i + 1));
        expect(events.filter((event) => isTerminalStatus(event.type as CallStatus))).toHaveLength(1);
        expect(events.at(-1)?.type).toBe('succeeded');
        expect(await runtime.get(reply.callId)).toMatchObject({ status: 'succeeded' });
      }
    } finally {
      await runtime.close();
    }
  });

  it('writes each tick whole, one batch at a time, in a client and in a worker alone', {
    timeout: 120_000,
  }, async () => {
    const schema = `alone_${process.pid}`;
    const storeOf = () => postgresStore({ connectionString: server.url, schema, writeBatchCalls: 10 });
    const client = counted(storeOf());
    const worker = counted(storeOf());
    const runtimes = [
      createRuntime({ tools: distributedTools, store: worker.counting, role: 'worker' }),
      createRuntime({
        tools: distributedTools,
        store: client.counting,
        role: 'client',
        inlineBudgetMs: 60_000,
      }),
    ];
    const [, caller] = runtimes as [unknown, (typeof runtimes)[number]];
    try {
      await Promise.all(runtimes.map((runtime) => runtime.ready));
      const replies = await Promise.all(
        Array.from({ length: 100 }, (_, i) =>
          caller.call({ name: 'echo', args: { text: `#${i}` }, sessionId: `s${i % 3}` }),
        ),
      );
      expect(replies.filter((reply) => reply.status !== 'succeeded')).toEqual([]);
      // The client's 100 calls, submitted in one tick, went out in one write, not in batches of 10.
      expect(client.seen.largest).toBe(100);
      expect(worker.seen.largest).toBeGreaterThan(10);
      expect([client.seen.most, worker.seen.most]).toEqual([1, 1]);
    } finally {
      await Promise.all(runtimes.map((runtime) => runtime.close()));
    }
  });

  it('has 3 batches of 250 calls in flight by default, and never more than half its connections', () => {
    const url = server.url;
    expect(postgresStore({ connectionString: url })).toMatchObject({
      writeConcurrency: 3,
      writeBatchCalls: 250,
    });
    expect(postgresStore({ connectionString: url, maxConnections: 4 }).writeConcurrency).toBe(2);
    expect(() => postgresStore({ connectionString: url, writeBatchCalls: 0 })).toThrow(
      'postgresStore: writeBatchCalls must be a whole number of at least 1, not 0',
    );
    expect(() => postgresStore({ connectionString: url, writeConcurrency: Number.NaN })).toThrow(
      'postgresStore: writeConcurrency must be a whole number of at least 1, not NaN',
    );
    expect(
      postgresStore({ connectionString: url, maxConnections: 4, writeConcurrency: 8 }).writeConcurrency,
    ).toBe(2);
  });
});
