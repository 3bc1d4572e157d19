import type { CallEvent } from '@baton/contracts';
import type { NoticeTopic, SessionEvent, Store, StoreNotice } from '@baton/store';
import { makeCallRecord, makeNotification } from '@baton/store/testing';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresStore } from '../src/index.js';
import { MIGRATIONS } from '../src/migrations.js';
import { type ThrowawayPostgres, throwawayPostgres } from '../src/testing.js';

let server: ThrowawayPostgres;
beforeAll(async () => {
  server = await throwawayPostgres();
}, 60_000);
afterAll(() => server.stop());

function progressEvent(callId: string, seq: number, sessionId: string): CallEvent {
  return { type: 'progress', callId, sessionId, toolName: 't', seq, at: seq, progress: { current: seq } };
}

describe('PostgreSQL under concurrency', () => {
  it('migrates once when many stores open the same schema at once', async () => {
    const stores = Array.from({ length: 6 }, () =>
      postgresStore({
        connectionString: server.url,
        schema: `opened_at_once_${process.pid}`,
        maxConnections: 2,
      }),
    );
    await Promise.all(stores.map((store) => store.listCalls()));
    const client = new pg.Client({ connectionString: server.url });
    await client.connect();
    const { rows } = await client.query(
      `SELECT version FROM opened_at_once_${process.pid}.baton_schema ORDER BY version`,
    );
    await client.end();
    expect(rows).toEqual(MIGRATIONS.map((_, step) => ({ version: step + 1 })));
    await Promise.all(stores.map((store) => store.close()));
  });

  it('lets a follower of a session read every event once while four writers commit to it at once', async () => {
    const schema = `one_session_${process.pid}`;
    const writers: Store[] = Array.from({ length: 4 }, () =>
      postgresStore({ connectionString: server.url, schema, maxConnections: 2 }),
    );
    const reader = postgresStore({ connectionString: server.url, schema });
    const calls = writers.map((_, w) => makeCallRecord({ callId: `w${w}`, sessionId: 's' }));
    await reader.write({ calls });

    const perWriter = 150;
    let writing = true;
    const writes = Promise.all(
      writers.map(async (store, w) => {
        for (let seq = 1; seq <= perWriter; seq++) {
          await store.write({ events: [progressEvent(`w${w}`, seq, 's')] });
        }
      }),
    ).finally(() => {
      writing = false;
    });
    const seen: SessionEvent[] = [];
    while (writing) {
      seen.push(...(await reader.listSessionEvents('s', seen.at(-1)?.position ?? 0)));
    }
    await writes;
    seen.push(...(await reader.listSessionEvents('s', seen.at(-1)?.position ?? 0)));

    const labels = seen.map(({ event }) => `${event.callId}:${event.seq}`);
    expect(new Set(labels).size).toBe(labels.length);
    expect(labels).toHaveLength(writers.length * perWriter);
    await Promise.all([...writers, reader].map((store) => store.close()));
  });

  it("fences a writer that no longer owns a call: none of that call's rows change", async () => {
    const store = postgresStore({ connectionString: server.url, schema: `fencing_${process.pid}` });
    await store.write({
      calls: [makeCallRecord({ callId: 'c', ownerId: 'w1', status: 'inline' })],
      events: [progressEvent('c', 1, 's')],
      writer: 'w1',
    });
    await store.registerInstance({
      id: 'w1',
      host: 'h',
      pid: 1,
      boot: 'b',
      startedAt: 0,
      heartbeatAt: 0,
      leaseMs: 1,
      protocol: 2,
    });
    await store.claimCalls(['w1'], 'w2');
    // Its last write made again (its answer lost) is not taken as written: the call is another's now.
    await store.write({
      calls: [makeCallRecord({ callId: 'c', ownerId: 'w1', status: 'inline' })],
      events: [progressEvent('c', 1, 's')],
      notifications: [makeNotification({ id: 'n0', callId: 'c', sessionId: 's' })],
      writer: 'w1',
    });
    expect(await store.getCall('c')).toMatchObject({ status: 'inline', ownerId: 'w2' });
    await store.write({
      calls: [makeCallRecord({ callId: 'c', ownerId: 'w1', status: 'succeeded', endedAt: 5 })],
      events: [progressEvent('c', 2, 's')],
      notifications: [makeNotification({ id: 'n', callId: 'c', sessionId: 's' })],
      artifacts: [{ callId: 'c', name: 'output.log', content: 'late' }],
      writer: 'w1',
    });
    expect(await store.getCall('c')).toMatchObject({ status: 'inline', ownerId: 'w2' });
    expect((await store.listEvents('c')).map((event) => event.seq)).toEqual([1]);
    expect(await store.listNotifications()).toEqual([]);
    expect(await store.listArtifacts('c')).toEqual([]);

    // The owner writes; and no one writes an earlier attempt over a later one.
    await store.write({ calls: [makeCallRecord({ callId: 'c', ownerId: 'w2', attempt: 2 })], writer: 'w2' });
    await store.write({
      calls: [makeCallRecord({ callId: 'c', ownerId: 'w2', attempt: 1, status: 'failed' })],
      writer: 'w2',
    });
    expect(await store.getCall('c')).toMatchObject({ attempt: 2, status: 'queued' });

    // A call ends once: after its end, no write changes it, its owner's included.
    const ended = (seq: number, by: string): CallEvent => ({
      type: 'succeeded',
      callId: 'c',
      sessionId: 's',
      toolName: 't',
      seq,
      at: seq,
      output: by,
    });
    const end = (seq: number, by: string) =>
      store.write({
        calls: [
          makeCallRecord({
            callId: 'c',
            ownerId: 'w2',
            attempt: 2,
            status: 'succeeded',
            endedAt: seq,
            output: by,
          }),
        ],
        events: [ended(seq, by)],
        writer: 'w2',
      });
    await end(3, 'first');
    await end(4, 'second');
    expect(await store.getCall('c')).toMatchObject({ status: 'succeeded', output: 'first' });
    expect((await store.listEvents('c')).map((event) => event.seq)).toEqual([1, 3]);
    await store.close();
  });

  it('tells its listeners, after the commit, which calls got events, from which writer, and that a call waits', async () => {
    const schema = `notices_${process.pid}`;
    const writer = postgresStore({ connectionString: server.url, schema });
    const listener = postgresStore({ connectionString: server.url, schema });
    const heard: StoreNotice[] = [];
    const listeningTo = (topic: NoticeTopic) =>
      new Promise<void>((resolve) => {
        listener.listen?.((notice) => {
          if (notice.type === 'listening') resolve();
          else heard.push(notice);
        }, topic);
      });
    await Promise.all([listeningTo({ type: 'events' }), listeningTo({ type: 'work' })]);
    await writer.write({
      calls: [makeCallRecord({ callId: 'q', sessionId: 's' })],
      events: [progressEvent('q', 1, 's')],
      writer: 'instance-1',
    });
    for (let turn = 0; turn < 500 && heard.length < 2; turn++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    // The writer is named, so that a runtime can skip the notices of its own writes.
    expect(heard).toEqual([
      { type: 'events', callIds: ['q'], sessionIds: ['s'], writer: 'instance-1' },
      { type: 'queued' },
    ]);
    await Promise.all([writer.close(), listener.close()]);
  });
});
