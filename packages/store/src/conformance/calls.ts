import { type CallEvent, isBatonError } from '@baton/contracts';
import { beforeEach, describe, expect, it } from 'vitest';
import type { Store } from '../store.js';
import { makeCallRecord, statusEvent } from './records.js';

/** `write` and the reads of calls: records kept as written, read back as copies, listed and paged. `storeOf` is the test's fresh store. */
export function describeCalls(storeOf: () => Store): void {
  describe('calls: kept, read, listed and paged', () => {
    let store: Store;
    beforeEach(() => {
      store = storeOf();
    });

    it('keeps a call and replaces it by callId', async () => {
      await store.write({ calls: [makeCallRecord({ callId: 'c1', args: { q: 'x' } })] });
      await store.write({ calls: [makeCallRecord({ callId: 'c1', status: 'succeeded', result: { n: 1 } })] });
      const record = await store.getCall('c1');
      expect(record).toMatchObject({ callId: 'c1', status: 'succeeded', result: { n: 1 } });
      expect(await store.getCall('missing')).toBeUndefined();
    });

    it('keeps text as written: quotes, backslashes, braces, commas and NULL in ids, newlines too in values', async () => {
      const awkwardId = '"quoted" \\back\\slash {a,b} NULL , é 💡';
      const awkward = `line 1\nline 2\r\n\t${awkwardId} \u2028`;
      const ids = ['c "1"', 'c\\2', '{c,3}', 'NULL', 'c, 5'];
      const records = ids.map((callId, i) =>
        makeCallRecord({
          callId,
          sessionId: `session ${awkwardId}`,
          toolName: i % 2 === 0 ? 'echo' : 'tool "two", {x}',
          args: { text: awkward, [awkward]: i },
          ...(i === 0
            ? { status: 'succeeded', endedAt: 2_000, ownerId: `owner ${awkwardId}`, result: awkward }
            : {}),
        }),
      );
      const events = ids.flatMap((callId) => [
        { ...statusEvent(callId, 1, `session ${awkwardId}`), text: awkward },
        statusEvent(callId, 2, `session ${awkwardId}`),
      ]);
      await store.write({ calls: records, events });
      expect(await store.getCalls(ids)).toEqual(expect.arrayContaining(records));
      for (const [i, callId] of ids.entries()) {
        expect(await store.getCall(callId)).toEqual(records[i]);
        expect(await store.listEvents(callId)).toEqual(events.slice(2 * i, 2 * i + 2));
      }
      const page = await store.listCalls({ sessionId: `session ${awkwardId}`, limit: 10 });
      expect(page.calls.map(({ callId }) => callId)).toEqual([...ids].reverse());
      const byTool = await store.listCalls({ toolName: 'tool "two", {x}', limit: 10 });
      expect(byTool.calls.map(({ callId }) => callId)).toEqual([ids[3], ids[1]]);
      const bySessionPrefix = await store.listCalls({ sessionPrefix: 'session "quoted" \\back', limit: 10 });
      expect(bySessionPrefix.calls).toHaveLength(ids.length);
      const bySession = await store.listSessionEvents(`session ${awkwardId}`);
      expect(bySession.map(({ event }) => event)).toEqual(events);
      // The runtime refuses ids with control characters; a store keeps them all the same.
      const tabbed = makeCallRecord({ callId: 'c\t6', sessionId: 's\t6', toolName: 'tool\t"6"' });
      await store.write({ calls: [tabbed], events: [statusEvent('c\t6', 1, 's\t6')] });
      expect(await store.getCall('c\t6')).toEqual(tabbed);
      expect(await store.listEvents('c\t6')).toEqual([statusEvent('c\t6', 1, 's\t6')]);
    });

    it('reads many calls at once: those that exist, each once', async () => {
      await store.write({
        calls: ['c1', 'c2', 'c3'].map((callId) => makeCallRecord({ callId, ownerId: 'w1' })),
      });
      const found = await store.getCalls(['c3', 'missing', 'c1', 'c3']);
      expect(found.map((record) => record.callId).sort()).toEqual(['c1', 'c3']);
      expect(found[0]).toMatchObject({ ownerId: 'w1', status: 'queued' });
      expect(await store.getCalls([])).toEqual([]);
    });

    it('fails with BatonError only: a write it refuses is persistence_failed, its own error the cause', async () => {
      await store.write({ calls: [makeCallRecord({ callId: 'c1' })], events: [statusEvent('c1', 1)] });
      const other: CallEvent = { ...statusEvent('c1', 1), at: 0 };
      const refused = await store.write({ events: [other] }).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(isBatonError(refused)).toBe(true);
      expect(refused).toMatchObject({ code: 'persistence_failed' });
      expect((refused as Error).cause).toBeInstanceOf(Error);
      expect((refused as Error).message).toBe(((refused as Error).cause as Error).message);
    });

    it('hands out copies: changing a returned record changes nothing stored', async () => {
      const written = makeCallRecord({ callId: 'c1' });
      await store.write({ calls: [written] });
      written.status = 'failed';
      const read = await store.getCall('c1');
      if (!read) throw new Error('record missing');
      read.status = 'cancelled';
      expect((await store.getCall('c1'))?.status).toBe('queued');
    });

    it('lists calls newest first, filtered by session, status and tool', async () => {
      await store.write({
        calls: [
          makeCallRecord({
            callId: 'a',
            sessionId: 's1',
            toolName: 'echo',
            status: 'succeeded',
            createdAt: 1,
          }),
          makeCallRecord({ callId: 'b', sessionId: 's2', toolName: 'echo', status: 'failed', createdAt: 2 }),
          makeCallRecord({
            callId: 'c',
            sessionId: 's1',
            toolName: 'slow',
            status: 'backgrounded',
            createdAt: 3,
          }),
        ],
      });
      const ids = async (filter: Parameters<Store['listCalls']>[0]) =>
        (await store.listCalls(filter)).calls.map((call) => call.callId);
      expect(await ids({})).toEqual(['c', 'b', 'a']);
      expect(await ids({ sessionId: 's1' })).toEqual(['c', 'a']);
      expect(await ids({ status: 'failed' })).toEqual(['b']);
      expect(await ids({ status: ['failed', 'succeeded'] })).toEqual(['b', 'a']);
      expect(await ids({ toolName: 'slow' })).toEqual(['c']);
      expect(await ids({ sessionPrefix: 's' })).toEqual(['c', 'b', 'a']);
      expect(await ids({ sessionPrefix: 's2' })).toEqual(['b']);
      expect(await ids({ sessionPrefix: 'S' })).toEqual([]);
    });

    it.each(['abc', '1e309', '-1', '1.5', '', '99999999999999999999'])(
      'refuses the cursor %j with invalid_arguments, as no page gave it',
      async (cursor) => {
        await expect(store.listCalls({ cursor })).rejects.toMatchObject({ code: 'invalid_arguments' });
      },
    );

    it('pages through every call once with the cursor', async () => {
      const calls = Array.from({ length: 25 }, (_, i) => makeCallRecord({ callId: `c${i}`, createdAt: i }));
      await store.write({ calls });
      const seen: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await store.listCalls({ limit: 10, ...(cursor ? { cursor } : {}) });
        seen.push(...page.calls.map((call) => call.callId));
        cursor = page.nextCursor;
      } while (cursor);
      expect(seen).toEqual(calls.map((call) => call.callId).reverse());
    });
  });
}
