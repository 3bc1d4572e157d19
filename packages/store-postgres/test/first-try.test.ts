import type { CallEvent, CallRecord } from '@baton/contracts';
import type { NoticeTopic, Store, StoreNotice, StoreWrite } from '@baton/store';
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

// A write whose calls the runtime names none of as new takes them as stored already: its first try
// updates them with a plain UPDATE, and any it does not find so fails it, for the second try.
describe('a PostgreSQL write of calls stored already', () => {
  it("updates them, keeps the queue and the owners, and tells the waiting client with the call's record", async () => {
    const store = storeOfItsOwn();
    const queued = makeCallRecord({ callId: 'c1', replyTo: 'client-1' });
    await store.write({ calls: [queued], newCalls: ['c1'] });
    const [claimed] = await store.claimQueued('worker-1', 1);
    expect(claimed?.record.ownerId).toBe('worker-1');
    const replies = listening(store, { type: 'replies', to: 'client-1' });
    await replies.next('listening');
    const running = { ...queued, status: 'inline' as const, ownerId: 'worker-1' };
    await store.write({ calls: [running], events: [event(running, 1)], writer: 'worker-1' });
    expect((await store.claimCalls(['worker-1'], 'heir')).map((record) => record.callId)).toEqual(['c1']);
    const ended = { ...running, status: 'succeeded' as const, endedAt: 5, ownerId: 'heir', attempt: 1 };
    await store.write({ calls: [ended], events: [event(ended, 2)], writer: 'heir' });
    expect(await store.getCall('c1')).toEqual(ended);
    // Ended: held by no one, and in no queue.
    expect(await store.claimCalls(['heir'], 'another')).toEqual([]);
    expect(await store.claimQueued('worker-2', 10)).toEqual([]);
    expect(await replies.next('events')).toMatchObject({
      callIds: ['c1'],
      records: [ended],
      writer: 'heir',
    });
    replies.stop();
    await store.close();
  });

  it('writes one not stored, refuses one fenced, and takes one made again as written, beside the others', async () => {
    const store = storeOfItsOwn();
    const mine = makeCallRecord({ callId: 'mine', status: 'inline', ownerId: 'w1' });
    const theirs = makeCallRecord({ callId: 'theirs', status: 'inline', ownerId: 'w2' });
    await store.write({ calls: [mine, theirs], newCalls: ['mine', 'theirs'] });
    const ended = { ...mine, status: 'succeeded' as const, endedAt: 5 };
    const again: StoreWrite = { calls: [ended], events: [event(ended, 1)], writer: 'w1' };
    await store.write(again);
    await store.write(again);
    expect(await store.getCall('mine')).toEqual(ended);
    expect((await store.listEvents('mine')).map((stored) => stored.seq)).toEqual([1]);
    // Not stored (no hint said it was new), and another's: the one written, the other refused.
    const unnamed = makeCallRecord({ callId: 'unnamed', status: 'inline', ownerId: 'w1' });
    const late = { ...theirs, status: 'failed' as const, endedAt: 6, ownerId: 'w1' };
    await store.write({ calls: [unnamed, late], events: [event(unnamed, 1), event(late, 1)], writer: 'w1' });
    expect(await store.getCall('unnamed')).toEqual(unnamed);
    expect(await store.getCall('theirs')).toEqual(theirs);
    expect(await store.listEvents('theirs')).toEqual([]);
    await store.close();
  });
});

/** What a store's listener hears on a topic: `next(type)` resolves with the first notice of that type. */
function listening(store: Store, topic: NoticeTopic) {
  const heard: StoreNotice[] = [];
  let wake = () => {};
  const stop = store.listen?.((notice) => {
    heard.push(notice);
    wake();
  }, topic);
  const next = async (type: StoreNotice['type']): Promise<StoreNotice> => {
    for (;;) {
      const found = heard.find((notice) => notice.type === type);
      if (found) return found;
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
    }
  };
  return { next, stop: () => stop?.() };
}
