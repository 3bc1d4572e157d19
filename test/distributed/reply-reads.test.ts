import type { CallRecord } from '@baton/contracts';
import { createRuntime } from '@baton/runtime';
import type { NoticeTopic, Store, StoreNotice } from '@baton/store';
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

/** The store, keeping the topics its runtime listens to and what they tell. */
function noticesCounted(store: Store) {
  const topics: NoticeTopic[] = [];
  const heard: StoreNotice[] = [];
  const counting: Store = Object.assign(Object.create(store), {
    listen(listener: (notice: StoreNotice) => void, topic: NoticeTopic) {
      topics.push(topic);
      const stop = store.listen?.((notice) => {
        heard.push(notice);
        listener(notice);
      }, topic);
      return () => stop?.();
    },
  });
  const heardCallIds = () =>
    new Set(heard.flatMap((notice) => (notice.type === 'events' ? notice.callIds : [])));
  return { counting, topics, heard, heardCallIds };
}

describe('a client reading its replies on PostgreSQL', () => {
  it('answers from the records the notices hold, reading back only a record too long for one, and never on the notice of its own submit', {
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
      // Longer than a PostgreSQL notice may be (8,000 bytes).
      const long = 'x'.repeat(8_000);
      const replies = await Promise.all(
        Array.from({ length: 300 }, (_, i) =>
          caller.call({ name: 'echo', args: { text: i === 150 ? long : `#${i}` }, sessionId: `s${i % 5}` }),
        ),
      );
      expect(replies.filter((reply) => reply.status !== 'succeeded')).toEqual([]);
      expect(replies[150]?.output).toMatchObject({ text: long });
      // Read back: the one call whose record no notice could hold, once it ended.
      expect(client.read.map((record) => [record.status, record.args])).toEqual([
        ['succeeded', { text: long }],
      ]);
    } finally {
      await Promise.all([caller.close(), worker.close()]);
    }
  });

  it('tells each client of its own calls only, and the worker of none of their events', {
    timeout: 120_000,
  }, async () => {
    const schema = `reply_topics_${process.pid}`;
    const storeOf = () => postgresStore({ connectionString: server.url, schema });
    const [one, two, working] = [
      noticesCounted(storeOf()),
      noticesCounted(storeOf()),
      noticesCounted(storeOf()),
    ];
    const worker = createRuntime({ tools: distributedTools, store: working.counting, role: 'worker' });
    // No poll within the test: every reply comes from a notice.
    const clientOf = (store: Store) =>
      createRuntime({
        tools: distributedTools,
        store,
        role: 'client',
        inlineBudgetMs: 60_000,
        pollMs: 600_000,
      });
    const clients = [clientOf(one.counting), clientOf(two.counting)] as const;
    try {
      await Promise.all([worker.ready, ...clients.map((client) => client.ready)]);
      const callsOf = (client: (typeof clients)[number], prefix: string) =>
        Promise.all(
          Array.from({ length: 200 }, (_, i) =>
            client.call({
              name: 'echo',
              args: { text: `#${i}` },
              sessionId: `s${i % 5}`,
              callId: `${prefix}-${i}`,
            }),
          ),
        );
      const [repliesOne, repliesTwo] = await Promise.all([
        callsOf(clients[0], 'one'),
        callsOf(clients[1], 'two'),
      ]);
      expect([...repliesOne, ...repliesTwo].filter((reply) => reply.status !== 'succeeded')).toEqual([]);
      // Each client listens to its replies alone (it follows nothing), and hears of each of its calls.
      expect(one.topics).toEqual([{ type: 'replies', to: clients[0].instanceId }]);
      expect(two.topics).toEqual([{ type: 'replies', to: clients[1].instanceId }]);
      expect([...one.heardCallIds()].sort()).toEqual(repliesOne.map((reply) => reply.callId).sort());
      expect([...two.heardCallIds()].sort()).toEqual(repliesTwo.map((reply) => reply.callId).sort());
      // The worker hears that calls wait, and nothing of the events it and the clients store.
      expect(working.topics).toEqual([{ type: 'work' }]);
      expect(working.heard.filter((notice) => notice.type === 'events')).toEqual([]);
      expect(working.heard.some((notice) => notice.type === 'queued')).toBe(true);
    } finally {
      await Promise.all([...clients.map((client) => client.close()), worker.close()]);
    }
  });
});
