import type { CallRecord } from '@baton/contracts';
import { createRuntime } from '@baton/runtime';
import type { Store } from '@baton/store';
import { postgresStore } from '@baton/store-postgres';
import { type ThrowawayPostgres, throwawayPostgres } from '@baton/store-postgres/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { distributedTools } from './tools.mjs';

let server: ThrowawayPostgres;
beforeAll(async () => {
  server = await throwawayPostgres();
}, 60_000);
afterAll(() => server.stop());

/** The store, keeping every record its `getCalls` read. */
function readsCounted(store: Store) {
  const read: CallRecord[] = [];
  const counting: Store = Object.assign(Object.create(store), {
    async getCalls(callIds: string[]) {
      const records = await store.getCalls(callIds);
      read.push(...records);
      return records;
    },
  });
  return { counting, read };
}

describe('a client reading its replies on PostgreSQL', () => {
  it('reads a call when a worker stored its events, never on the notice of its own submit', {
    timeout: 120_000,
  }, async () => {
    const schema = `reply_reads_${process.pid}`;
    const storeOf = () => postgresStore({ connectionString: server.url, schema });
    const client = readsCounted(storeOf());
    const worker = createRuntime({ tools: distributedTools, store: storeOf(), role: 'worker' });
    // No poll within the test: every read comes from a notice.
    const caller = createRuntime({
      tools: distributedTools,
      store: client.counting,
      role: 'client',
      inlineBudgetMs: 60_000,
      pollMs: 600_000,
    });
    try {
      await Promise.all([worker.ready, caller.ready]);
      const replies = await Promise.all(
        Array.from({ length: 300 }, (_, i) =>
          caller.call({ name: 'echo', args: { text: `#${i}` }, sessionId: `s${i % 5}` }),
        ),
      );
      expect(replies.filter((reply) => reply.status !== 'succeeded')).toEqual([]);
      // The notice of the client's own write (the queued calls) is not a reason to read: before,
      // every call was read once for nothing, still queued.
      expect(client.read.filter((record) => record.status === 'queued')).toEqual([]);
      const succeeded = client.read.filter((record) => record.status === 'succeeded');
      expect(new Set(succeeded.map((record) => record.callId)).size).toBe(300);
    } finally {
      await Promise.all([caller.close(), worker.close()]);
    }
  });
});
