import { type CallEvent, type CallRecord, defineTool } from '@baton/contracts';
import { memoryStore, type Store, type StoreWrite } from '@baton/store';
import { makeCallRecord } from '@baton/store/testing';
import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { createRuntime } from '../src/index.js';
import { type RefusedWrite, WriteBatcher } from '../src/write-batcher.js';

function event(record: CallRecord): CallEvent {
  const { callId, sessionId, toolName } = record;
  return { type: 'queued', mode: 'inline', callId, sessionId, toolName, seq: 1, at: 1 };
}

/** A batcher on this store that publishes nowhere and reports no failure, as writer `t`. */
function quietBatcher(
  store: Store,
  options: Partial<ConstructorParameters<typeof WriteBatcher>[0]> = {},
): WriteBatcher {
  return new WriteBatcher({ store, publish: () => {}, failed: () => {}, writer: 't', ...options });
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

/** A store whose writes end when the test says, and that takes `writeConcurrency` of them at once. */
function heldStore(writeConcurrency: number) {
  const store = memoryStore();
  const held: Array<{ batch: StoreWrite; release: () => void }> = [];
  const holding = Object.assign(Object.create(store), {
    writeConcurrency,
    write(batch: StoreWrite) {
      // Taken now, written when released: what a store with a round trip does.
      const copy = structuredClone(batch);
      return new Promise<void>((resolve, reject) => {
        held.push({ batch: copy, release: () => store.write(copy).then(resolve, reject) });
      });
    },
  });
  return { store, holding, held };
}

const nextTick = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('the write batcher pipelines its writes', () => {
  it('has up to the store’s writeConcurrency batches in flight, of different calls', async () => {
    const { holding, held } = heldStore(2);
    const batcher = quietBatcher(holding);
    for (const callId of ['a', 'b', 'c']) {
      batcher.record(makeCallRecord({ callId }));
      await nextTick();
    }
    // Two in flight at once; the third waits for a free place.
    expect(held.map(({ batch }) => batch.calls?.map((record) => record.callId))).toEqual([['a'], ['b']]);
    held[1]?.release();
    await nextTick();
    expect(held.map(({ batch }) => batch.calls?.map((record) => record.callId))).toEqual([
      ['a'],
      ['b'],
      ['c'],
    ]);
  });

  it('keeps one call’s writes in order: a batch with a call in flight waits for it, and later changes win', async () => {
    const { store, holding, held } = heldStore(4);
    const published: string[] = [];
    const batcher = new WriteBatcher({
      store: holding,
      publish: (stored) => published.push(`${stored.callId} ${stored.type}`),
      failed: () => {},
      writer: 't',
    });
    const queued = makeCallRecord({ callId: 'a', status: 'queued' });
    batcher.record(queued);
    batcher.add('events', { ...event(queued), seq: 1 });
    await nextTick();
    const running = { ...queued, status: 'inline' as const };
    batcher.record(running);
    batcher.add('events', {
      type: 'started',
      callId: 'a',
      sessionId: queued.sessionId,
      toolName: queued.toolName,
      seq: 2,
      at: 2,
      attempt: 1,
    });
    batcher.record(makeCallRecord({ callId: 'other' }));
    await nextTick();
    // 'a' is in flight: the batch that holds its next change (and another call's) waits.
    expect(held).toHaveLength(1);
    held[0]?.release();
    await vi.waitFor(() => expect(held).toHaveLength(2));
    expect(held[1]?.batch.calls?.map((record) => [record.callId, record.status])).toEqual([
      ['a', 'inline'],
      ['other', 'queued'],
    ]);
    held[1]?.release();
    await batcher.drain();
    expect(published).toEqual(['a queued', 'a started']);
    expect(await store.getCall('a')).toMatchObject({ status: 'inline' });
  });
});

/** A store like `heldStore`, that also asks for batches of at most `writeBatchCalls` calls. */
function cuttingStore(writeConcurrency: number, writeBatchCalls: number) {
  const held = heldStore(writeConcurrency);
  return { ...held, holding: Object.assign(held.holding, { writeBatchCalls }) };
}

const callIdsOf = (batch: StoreWrite) => batch.calls?.map((record) => record.callId);

/** What a call does in one tick: its record and an event, then its end and another event. */
function runInOneTick(batcher: WriteBatcher, callId: string): CallRecord {
  const record = makeCallRecord({ callId, status: 'queued' });
  batcher.record(record);
  batcher.add('events', { ...event(record), seq: 1 });
  record.status = 'succeeded';
  batcher.record(record);
  batcher.add('events', { ...event(record), type: 'succeeded', seq: 2 } as CallEvent);
  return record;
}

describe('the write batcher cuts a tick into batches of the store’s writeBatchCalls', () => {
  it('writes a tick of 7 calls as batches of 3, 3 and 1, each call’s rows of the tick in one, each record once', async () => {
    const { store, holding, held } = cuttingStore(1, 3);
    const batcher = quietBatcher(holding);
    for (let i = 0; i < 7; i++) runInOneTick(batcher, `c${i}`);
    await nextTick();
    // One write at a time: the first is out, the other two wait their turn.
    expect(held.map(({ batch }) => callIdsOf(batch))).toEqual([['c0', 'c1', 'c2']]);
    held[0]?.release();
    await vi.waitFor(() => expect(held).toHaveLength(2));
    held[1]?.release();
    await vi.waitFor(() => expect(held).toHaveLength(3));
    held[2]?.release();
    await batcher.drain();
    expect(held.map(({ batch }) => callIdsOf(batch))).toEqual([
      ['c0', 'c1', 'c2'],
      ['c3', 'c4', 'c5'],
      ['c6'],
    ]);
    for (const { batch } of held) {
      expect(batch.calls?.every((record) => record.status === 'succeeded')).toBe(true);
      expect(batch.events?.map((stored) => `${stored.callId} ${stored.seq}`)).toEqual(
        (callIdsOf(batch) ?? []).flatMap((callId) => [`${callId} 1`, `${callId} 2`]),
      );
    }
    expect((await store.listCalls({ limit: 100 })).calls).toHaveLength(7);
  });

  it('has a call’s rows of a later tick wait for its batch in flight, in a batch of their own', async () => {
    const { holding, held } = cuttingStore(2, 2);
    const published: string[] = [];
    const batcher = new WriteBatcher({
      store: holding,
      publish: (stored) => published.push(`${stored.callId} ${stored.seq}`),
      failed: () => {},
      writer: 't',
    });
    const first = runInOneTick(batcher, 'a');
    runInOneTick(batcher, 'b');
    runInOneTick(batcher, 'c');
    await nextTick();
    // Two in flight: [a, b] and [c].
    expect(held.map(({ batch }) => callIdsOf(batch))).toEqual([['a', 'b'], ['c']]);
    batcher.add('events', { ...event(first), type: 'succeeded', seq: 3 } as CallEvent);
    await nextTick();
    expect(held).toHaveLength(2);
    held[1]?.release();
    await nextTick();
    // A place is free, but 'a' is still in flight: its next row waits.
    expect(held).toHaveLength(2);
    held[0]?.release();
    await vi.waitFor(() => expect(held).toHaveLength(3));
    expect(held[2]?.batch.events?.map((stored) => `${stored.callId} ${stored.seq}`)).toEqual(['a 3']);
    held[2]?.release();
    await batcher.drain();
    expect(published.filter((line) => line.startsWith('a'))).toEqual(['a 1', 'a 2', 'a 3']);
  });

  it('writes each tick whole, one batch at a time, when it is not pipelined (a client or a worker alone)', async () => {
    const { holding, held } = cuttingStore(4, 2);
    const batcher = quietBatcher(holding, { pipelined: false });
    for (let i = 0; i < 5; i++) runInOneTick(batcher, `c${i}`);
    await nextTick();
    runInOneTick(batcher, 'later');
    await nextTick();
    expect(held.map(({ batch }) => callIdsOf(batch))).toEqual([['c0', 'c1', 'c2', 'c3', 'c4']]);
    held[0]?.release();
    await vi.waitFor(() => expect(held).toHaveLength(2));
    expect(callIdsOf((held[1] as { batch: StoreWrite }).batch)).toEqual(['later']);
    held[1]?.release();
    await batcher.drain();
  });
});

describe('the write batcher cuts by the calls in flight', () => {
  async function cutsOf(liveCalls: number, tick: number): Promise<number[]> {
    const { holding, held } = cuttingStore(1, 250);
    const batcher = quietBatcher(holding, { liveCalls: () => liveCalls });
    for (let i = 0; i < tick; i++) runInOneTick(batcher, `c${i}`);
    const drained = batcher.drain();
    for (let written = 0; ; written++) {
      await vi.waitFor(() => expect(held.length).toBeGreaterThan(written));
      held[written]?.release();
      if (
        held.slice(0, written + 1).reduce((sum, { batch }) => sum + (batch.calls?.length ?? 0), 0) === tick
      ) {
        break;
      }
    }
    await drained;
    return held.map(({ batch }) => batch.calls?.length ?? 0);
  }

  it('makes about four batches of the calls in flight, of at least 100 calls and at most the store’s writeBatchCalls', async () => {
    expect(await cutsOf(1_000, 1_000)).toEqual([250, 250, 250, 250]);
    expect(await cutsOf(400, 400)).toEqual([100, 100, 100, 100]);
    expect(await cutsOf(200, 200)).toEqual([100, 100]);
    expect(await cutsOf(64, 64)).toEqual([64]);
    expect(await cutsOf(4_000, 600)).toEqual([250, 250, 100]);
  });

  it('does not cut for a store that names no writeBatchCalls, whatever its writeConcurrency', async () => {
    const { holding, held } = heldStore(2);
    const batcher = quietBatcher(holding, { liveCalls: () => 1_000 });
    for (let i = 0; i < 300; i++) runInOneTick(batcher, `c${i}`);
    await nextTick();
    expect(held.map(({ batch }) => batch.calls?.length)).toEqual([300]);
    held[0]?.release();
    await batcher.drain();
  });
});

describe('a runtime cuts its writes by all of its calls in flight', () => {
  it('counts the calls whose end waits for its write: 1,000 callers make batches of about 250, not the least 100', async () => {
    const sizes: number[] = [];
    const base = memoryStore();
    // A store that pipelines (two writes at a time, of at most 250 calls) and commits a turn later.
    const store: Store = Object.assign(Object.create(base), {
      writeConcurrency: 2,
      writeBatchCalls: 250,
      async write(batch: StoreWrite) {
        sizes.push(batch.calls?.length ?? 0);
        await new Promise((resolve) => setImmediate(resolve));
        await base.write(batch);
      },
    });
    const addOne = defineTool({
      name: 'add_one',
      description: 'adds one',
      input: z.object({ i: z.number() }),
      execute: async ({ i }) => i + 1,
    });
    const runtime = createRuntime({ tools: [addOne], store, inlineBudgetMs: 60_000 });
    await runtime.ready;
    // 1,000 callers, each making its next call once the last is answered, as a busy server does.
    await Promise.all(
      Array.from({ length: 1_000 }, async (_, caller) => {
        for (let i = 0; i < 5; i++) {
          const reply = await runtime.call({ name: 'add_one', args: { i }, sessionId: `s${caller % 16}` });
          expect(reply.output).toBe(i + 1);
        }
      }),
    );
    await runtime.close();
    const sorted = sizes.filter((size) => size > 0).sort((a, b) => a - b);
    expect(sorted.reduce((sum, size) => sum + size, 0)).toBe(5_000);
    // A quarter of the 1,000 calls in flight, most of the time (the last turns have fewer left).
    expect(sorted[Math.floor(sorted.length / 2)]).toBeGreaterThanOrEqual(200);
  });
});

describe('a runtime tells its store which records are the first of new calls', () => {
  it('names the first record of a call under an id it made up (firstRecords), never a later one, nor a caller’s id', async () => {
    const writes: StoreWrite[] = [];
    const base = memoryStore();
    const store: Store = Object.assign(Object.create(base), {
      async write(batch: StoreWrite) {
        writes.push(batch);
        await base.write(batch);
      },
    });
    let open: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    const slow = defineTool({
      name: 'slow',
      description: 'waits for the test',
      input: z.object({}),
      execute: async () => {
        await gate;
        return 'done';
      },
    });
    const runtime = createRuntime({ tools: [slow], store, inlineBudgetMs: 60_000 });
    await runtime.ready;
    const made = runtime.call({ name: 'slow', args: {}, sessionId: 's1' });
    const named = runtime.call({ name: 'slow', args: {}, sessionId: 's1', callId: 'callers-own' });
    await vi.waitFor(() => expect(writes.flatMap((write) => write.calls ?? [])).toHaveLength(2));
    open();
    const [reply] = await Promise.all([made, named]);
    await runtime.close();
    const firstOf = (callId: string) =>
      writes.findIndex((write) => write.calls?.some((r) => r.callId === callId));
    const first = firstOf(reply.callId);
    expect(writes[first]?.firstRecords).toEqual([reply.callId]);
    expect(
      writes.slice(first + 1).filter((write) => write.calls?.some((r) => r.callId === reply.callId)),
    ).not.toEqual([]);
    expect(writes.slice(first + 1).flatMap((write) => write.firstRecords ?? [])).toEqual([]);
    expect(writes.flatMap((write) => write.firstRecords ?? [])).not.toContain('callers-own');
  });
});
