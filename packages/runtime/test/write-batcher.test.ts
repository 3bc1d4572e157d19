import type { CallEvent, CallRecord } from '@baton/contracts';
import { memoryStore, type StoreWrite } from '@baton/store';
import { makeCallRecord } from '@baton/store/testing';
import { describe, expect, it } from 'vitest';
import { type RefusedWrite, WriteBatcher } from '../src/write-batcher.js';

function event(record: CallRecord): CallEvent {
  const { callId, sessionId, toolName } = record;
  return { type: 'queued', mode: 'inline', callId, sessionId, toolName, seq: 1, at: 1 };
}

describe('the write batcher keeps one call from failing another', () => {
  it('writes a refused batch in halves: only the part the store refuses on its own fails, in about 2·log2(n) more writes', async () => {
    const store = memoryStore();
    const writes: number[] = [];
    const picky = Object.assign(Object.create(store), {
      async write(batch: StoreWrite) {
        writes.push(batch.calls?.length ?? 0);
        if (batch.calls?.some((record) => record.callId === 'bad-17')) throw new Error('value too long');
        return store.write(batch);
      },
    });
    const refusals: RefusedWrite[] = [];
    const published: string[] = [];
    const batcher = new WriteBatcher({
      store: picky,
      publish: (stored) => published.push(stored.callId),
      failed: (refused) => refusals.push(...refused),
      writer: 'test',
    });
    const records = Array.from({ length: 256 }, (_, i) =>
      makeCallRecord({ callId: i === 17 ? 'bad-17' : `call-${i}` }),
    );
    const outcomes = records.map((record) => {
      batcher.add('events', event(record));
      return batcher.recordConfirmed(record).then(
        () => 'written',
        (error: Error) => error.message,
      );
    });
    expect(await Promise.all(outcomes)).toEqual(
      records.map((record) => (record.callId === 'bad-17' ? 'value too long' : 'written')),
    );
    expect(refusals).toMatchObject([
      { callId: 'bad-17', record: records[17], error: new Error('value too long') },
    ]);
    expect(refusals[0]?.rows.events).toEqual([event(records[17] as CallRecord)]);
    // One whole write, then two per level of halving: 1 + 2·8.
    expect(writes).toHaveLength(17);
    expect(published).toHaveLength(255);
    expect(published).not.toContain('bad-17');
    expect((await store.listCalls({ limit: 1_000 })).calls).toHaveLength(255);
  });

  it('writes a refused part again, as it was, with rewrite()', async () => {
    const store = memoryStore();
    let failing = true;
    const flaky = Object.assign(Object.create(store), {
      async write(batch: StoreWrite) {
        if (failing) throw new Error('disk full');
        return store.write(batch);
      },
    });
    const refusals: RefusedWrite[] = [];
    const batcher = new WriteBatcher({
      store: flaky,
      publish: () => {},
      failed: (r) => refusals.push(...r),
      writer: 't',
    });
    const record = makeCallRecord({ callId: 'c' });
    batcher.add('events', event(record));
    await expect(batcher.recordConfirmed(record)).rejects.toThrow('disk full');
    failing = false;
    await batcher.rewrite((refusals[0] as RefusedWrite).rows);
    expect(await store.getCall('c')).toEqual(record);
    expect(await store.listEvents('c')).toEqual([event(record)]);
  });
});
