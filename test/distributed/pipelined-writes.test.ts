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
  const seen = { inFlight: 0, most: 0, writes: 0 };
  const counting: Store = Object.assign(Object.create(store), {
    async write(batch: StoreWrite) {
      seen.writes++;
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

  it('writes one batch at a time by default, and never more than half its connections', () => {
    const url = server.url;
    expect(postgresStore({ connectionString: url }).writeConcurrency).toBe(1);
    expect(
      postgresStore({ connectionString: url, maxConnections: 4, writeConcurrency: 8 }).writeConcurrency,
    ).toBe(2);
  });
});
