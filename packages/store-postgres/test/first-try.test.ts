import type { CallEvent, CallRecord } from '@baton/contracts';
import type { StoreWrite } from '@baton/store';
import { makeCallRecord } from '@baton/store/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresStore } from '../src/index.js';
import { type ThrowawayPostgres, throwawayPostgres } from '../src/testing.js';

let server: ThrowawayPostgres;
beforeAll(async () => {
  server = await throwawayPostgres();
}, 60_000);
afterAll(() => server.stop());

let schemas = 0;
function storeOfItsOwn() {
  return postgresStore({ connectionString: server.url, schema: `first_try_${process.pid}_${schemas++}` });
}

function event(record: CallRecord, seq: number): CallEvent {
  const { callId, sessionId, toolName } = record;
  return { type: 'queued', mode: 'inline', callId, sessionId, toolName, seq, at: seq };
}

// A write's first try inserts its rows without ON CONFLICT; a row stored already fails it, and the
// second try is the statement that tells a write made again from a clash.
describe('a PostgreSQL write of calls the runtime says are new (firstRecords)', () => {
  it('stores them, and takes the same write made again (its answer lost) as written: each row once', async () => {
    const store = storeOfItsOwn();
    const records = ['c1', 'c2'].map((callId) => makeCallRecord({ callId, status: 'succeeded', endedAt: 5 }));
    const write: StoreWrite = {
      calls: records,
      events: records.flatMap((record) => [event(record, 1), event(record, 2)]),
      firstRecords: ['c1', 'c2'],
    };
    await store.write(write);
    await store.write(write);
    expect(await store.getCalls(['c1', 'c2'])).toEqual(records);
    expect((await store.listEvents('c1')).map((stored) => stored.seq)).toEqual([1, 2]);
    expect((await store.listSessionEvents('s1')).map(({ event }) => event.callId)).toEqual([
      'c1',
      'c1',
      'c2',
      'c2',
    ]);
    await store.close();
  });

  it('takes a write whose hint is wrong as it would without it: the stored call is changed, not refused', async () => {
    const store = storeOfItsOwn();
    const queued = makeCallRecord({ callId: 'c1' });
    await store.write({ calls: [queued], events: [event(queued, 1)] });
    const ended = { ...queued, status: 'succeeded' as const, endedAt: 5 };
    const fresh = makeCallRecord({ callId: 'c2' });
    await store.write({
      calls: [ended, fresh],
      events: [event(ended, 2), event(fresh, 1)],
      firstRecords: ['c1', 'c2'],
    });
    expect(await store.getCalls(['c1', 'c2'])).toEqual([ended, fresh]);
    expect((await store.listEvents('c1')).map((stored) => stored.seq)).toEqual([1, 2]);
    await store.close();
  });

  it('writes new calls beside stored ones in one write, and still refuses other events under stored numbers', async () => {
    const store = storeOfItsOwn();
    const queued = makeCallRecord({ callId: 'c1' });
    await store.write({ calls: [queued], events: [event(queued, 1)], firstRecords: ['c1'] });
    const fresh = makeCallRecord({ callId: 'c2' });
    const started = { ...queued, status: 'inline' as const };
    await store.write({
      calls: [started, fresh],
      events: [event(started, 2), event(fresh, 1)],
      firstRecords: ['c2'],
    });
    expect(await store.getCalls(['c1', 'c2'])).toEqual([started, fresh]);
    const other = { ...event(started, 2), at: 99 };
    await expect(store.write({ events: [other] })).rejects.toThrow(/already has other events from 2/);
    await expect(
      store.write({ calls: [makeCallRecord({ callId: 'c3' })], events: [other], firstRecords: ['c3'] }),
    ).rejects.toThrow(/already has other events from 2/);
    expect(await store.getCall('c3')).toBeUndefined();
    expect((await store.listEvents('c1')).map((stored) => stored.at)).toEqual([1, 2]);
    await store.close();
  });

  it('queues the new calls a worker may claim, and no other', async () => {
    const store = storeOfItsOwn();
    const waiting = makeCallRecord({ callId: 'c1', createdAt: 1 });
    const pending = makeCallRecord({ callId: 'c2', createdAt: 2, approval: 'pending' });
    const ended = makeCallRecord({ callId: 'c3', createdAt: 3, status: 'succeeded', endedAt: 3 });
    const next = makeCallRecord({ callId: 'c4', createdAt: 4 });
    await store.write({ calls: [waiting, pending, ended, next], firstRecords: ['c1', 'c2', 'c3', 'c4'] });
    const claimed = await store.claimQueued('worker-1', 10);
    expect(claimed.map(({ record }) => record.callId)).toEqual(['c1', 'c4']);
    expect(await store.claimQueued('worker-2', 10)).toEqual([]);
    await store.close();
  });

  it('keeps who holds the new unfinished calls, for the recovery of a process gone', async () => {
    const store = storeOfItsOwn();
    const running = makeCallRecord({ callId: 'c1', status: 'inline', ownerId: 'gone' });
    const ended = makeCallRecord({ callId: 'c2', status: 'succeeded', endedAt: 2, ownerId: 'gone' });
    await store.write({ calls: [running, ended], firstRecords: ['c1', 'c2'], writer: 'gone' });
    const taken = await store.claimCalls(['gone'], 'heir');
    expect(taken.map((record) => [record.callId, record.ownerId])).toEqual([['c1', 'heir']]);
    await store.close();
  });
});
