/**
 * `@baton/store/testing`: the conformance suite every Store adapter runs, and record builders for
 * tests. Uses vitest (an optional peer dependency of this package).
 */
import { type CallEvent, type CallRecord, isBatonError, type WebhookDelivery } from '@baton/contracts';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { describeNotificationHolds } from './conformance/notification-holds.js';
import { describeQueueDepth } from './conformance/queue-depth.js';
import {
  makeCallRecord,
  makeDelivery,
  makeInstance,
  makeNotification,
  makeSchedule,
  statusEvent,
} from './conformance/records.js';
import type { ClaimedCall, SessionEvent, Store, StoreWrite } from './store.js';

export { makeCallRecord, makeDelivery, makeInstance, makeNotification, makeSchedule, statusEvent };

/** Runs the Store contract against an adapter. `open` gives a fresh, empty store each time. */
export function describeStoreConformance(name: string, open: () => Promise<Store> | Store): void {
  describe(`Store conformance: ${name}`, () => {
    let store: Store;
    beforeEach(async () => {
      store = await open();
    });
    afterEach(async () => {
      await store.close();
    });

    describeNotificationHolds(() => store);
    describeQueueDepth(() => store);

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

    it('keeps events in order and replays them from a seq', async () => {
      await store.write({
        calls: [makeCallRecord({ callId: 'c1' })],
        events: [statusEvent('c1', 1), statusEvent('c1', 2)],
      });
      await store.write({ events: [statusEvent('c1', 3)] });
      expect((await store.listEvents('c1')).map((event) => event.seq)).toEqual([1, 2, 3]);
      expect((await store.listEvents('c1', 2)).map((event) => event.seq)).toEqual([2, 3]);
      expect(await store.listEvents('missing')).toEqual([]);
    });

    it("lists a session's events across its calls in the order they were stored, after a position", async () => {
      await store.write({
        calls: [
          makeCallRecord({ callId: 'a', sessionId: 's1' }),
          makeCallRecord({ callId: 'b', sessionId: 's1' }),
          makeCallRecord({ callId: 'x', sessionId: 's2' }),
        ],
        events: [statusEvent('b', 1, 's1'), statusEvent('a', 1, 's1'), statusEvent('x', 1, 's2')],
      });
      await store.write({ events: [statusEvent('a', 2, 's1'), statusEvent('b', 2, 's1')] });
      const all = await store.listSessionEvents('s1');
      expect(all.map(({ event }) => `${event.callId}${event.seq}`)).toEqual(['b1', 'a1', 'a2', 'b2']);
      const positions = all.map(({ position }) => position);
      expect(positions[0]).toBeGreaterThan(0);
      expect([...positions].sort((p, q) => p - q)).toEqual(positions);
      const resumed = await store.listSessionEvents('s1', positions[1]);
      expect(resumed.map(({ event }) => `${event.callId}${event.seq}`)).toEqual(['a2', 'b2']);
      expect(await store.listSessionEvents('s1', positions[3])).toEqual([]);
      expect(await store.listSessionEvents('missing')).toEqual([]);
      // A page at a time.
      const page = await store.listSessionEvents('s1', positions[0], 2);
      expect(page.map(({ event }) => `${event.callId}${event.seq}`)).toEqual(['a1', 'a2']);
      expect((await store.listEvents('a', 0, 1)).map((event) => event.seq)).toEqual([1]);
      expect((await store.listEvents('a', 2, 5)).map((event) => event.seq)).toEqual([2]);
    });

    it("keeps each call's events of one write in order among the session's, and resumes after any of them", async () => {
      const calls = ['a', 'b', 'c'].map((callId) => makeCallRecord({ callId, sessionId: 's1' }));
      await store.write({ calls, events: [statusEvent('a', 1, 's1')] });
      const second = ['b1', 'a2', 'c1', 'b2', 'a3', 'b3'];
      await store.write({
        events: second.map((name) => statusEvent(name.charAt(0), Number(name.slice(1)), 's1')),
      });
      await store.write({ events: [statusEvent('c', 2, 's1')] });
      const all = await store.listSessionEvents('s1');
      const names = all.map(({ event }) => `${event.callId}${event.seq}`);
      // A store keeps a write's events in the order given, or grouped by call in the order of
      // their first events (PostgreSQL); either way, the writes in the order they were made.
      const grouped = ['b1', 'b2', 'b3', 'a2', 'a3', 'c1'];
      expect([second, grouped]).toContainEqual(names.slice(1, 7));
      expect(names).toEqual(['a1', ...names.slice(1, 7), 'c2']);
      for (const [index, { position }] of all.entries()) {
        expect(await store.listSessionEvents('s1', position)).toEqual(all.slice(index + 1));
        expect(await store.listSessionEvents('s1', position, 2)).toEqual(all.slice(index + 1, index + 3));
      }
      expect(await store.listSessionEvents('s1', 0, 3)).toEqual(all.slice(0, 3));
      expect((await store.listEvents('b')).map((event) => event.seq)).toEqual([1, 2, 3]);
      expect((await store.listEvents('a', 2, 1)).map((event) => event.seq)).toEqual([2]);
      expect((await store.listEvents('b', 2)).map((event) => event.seq)).toEqual([2, 3]);
    });

    it('keeps a call of many events in one write, and pages through them', async () => {
      await store.write({
        calls: [makeCallRecord({ callId: 'long', sessionId: 's1' })],
        events: Array.from({ length: 600 }, (_, i) => statusEvent('long', i + 1, 's1')),
      });
      expect((await store.listEvents('long')).map((event) => event.seq)).toEqual(
        Array.from({ length: 600 }, (_, i) => i + 1),
      );
      expect((await store.listEvents('long', 256, 3)).map((event) => event.seq)).toEqual([256, 257, 258]);
      const paged: SessionEvent[] = [];
      for (let page = await store.listSessionEvents('s1', 0, 100); page.length > 0; ) {
        paged.push(...page);
        page = await store.listSessionEvents('s1', page.at(-1)?.position, 100);
      }
      expect(paged.map(({ event }) => event.seq)).toEqual(Array.from({ length: 600 }, (_, i) => i + 1));
      expect(await store.listSessionEvents('s1')).toEqual(paged);
    });

    it('pages notifications oldest first with limit and after', async () => {
      await store.write({
        notifications: Array.from({ length: 7 }, (_, i) =>
          makeNotification({
            id: `n${i}`,
            callId: `c${i}`,
            sessionId: i % 2 ? 'odd' : 'even',
            createdAt: 1_000 + i,
          }),
        ),
      });
      const ids = async (filter: Parameters<Store['listNotifications']>[0]) =>
        (await store.listNotifications(filter)).map((n) => n.id);
      expect(await ids({ limit: 3 })).toEqual(['n0', 'n1', 'n2']);
      expect(await ids({ limit: 3, after: 'n2' })).toEqual(['n3', 'n4', 'n5']);
      expect(await ids({ limit: 3, after: 'n5' })).toEqual(['n6']);
      expect(await ids({ sessionId: 'even', after: 'n2', limit: 1 })).toEqual(['n4']);
      expect(await ids({ after: 'no-such-notification' })).toEqual([]);
      expect(await ids({ id: 'n3' })).toEqual(['n3']);
      expect(await ids({ id: 'n3', sessionId: 'even' })).toEqual([]);
      expect(await ids({ id: 'nope' })).toEqual([]);
    });

    it('lists notifications oldest first and acknowledges each once', async () => {
      await store.write({
        calls: [makeCallRecord({ callId: 'c1' }), makeCallRecord({ callId: 'c2', sessionId: 's2' })],
        notifications: [
          makeNotification({ id: 'n1', callId: 'c1', createdAt: 1 }),
          makeNotification({ id: 'n2', callId: 'c2', sessionId: 's2', createdAt: 2 }),
        ],
      });
      expect((await store.listNotifications()).map((n) => n.id)).toEqual(['n1', 'n2']);
      expect((await store.listNotifications({ sessionId: 's2' })).map((n) => n.id)).toEqual(['n2']);
      expect((await store.listNotifications({ sessionPrefix: 's2' })).map((n) => n.id)).toEqual(['n2']);
      expect(await store.acknowledgeNotification('n1', 5)).toBe(true);
      expect(await store.acknowledgeNotification('n1', 6)).toBe(false);
      expect(await store.acknowledgeNotification('missing', 6)).toBe(false);
      expect((await store.listNotifications({ status: 'queued' })).map((n) => n.id)).toEqual(['n2']);
      expect(await store.countNotifications({ status: 'queued' })).toBe(1);
      expect(await store.countNotifications({ status: 'acknowledged', sessionPrefix: 's2' })).toBe(0);
      expect(await store.countNotifications({ sessionId: 's2' })).toBe(1);
      expect(await store.countNotifications()).toBe(2);
      expect(await store.listNotifications({ status: 'acknowledged' })).toMatchObject([
        { id: 'n1', acknowledgedAt: 5 },
      ]);
    });

    it('keeps webhook deliveries with their notifications, lists them newest first and counts them', async () => {
      await store.write({
        calls: [makeCallRecord({ callId: 'c1' }), makeCallRecord({ callId: 'c2', sessionId: 'acme/s' })],
        notifications: [makeNotification({ id: 'n1', callId: 'c1' })],
        deliveries: [makeDelivery({ id: 'd1', notificationId: 'n1', callId: 'c1' })],
      });
      await store.write({
        notifications: [makeNotification({ id: 'n2', callId: 'c2', sessionId: 'acme/s' })],
        deliveries: [
          makeDelivery({
            id: 'd2',
            notificationId: 'n2',
            callId: 'c2',
            sessionId: 'acme/s',
            createdAt: 3_000,
          }),
        ],
      });
      const [first] = await store.listDeliveries({ callId: 'c1' });
      expect(first).toEqual(makeDelivery({ id: 'd1', notificationId: 'n1', callId: 'c1' }));
      expect((await store.listDeliveries()).map(({ id }) => id)).toEqual(['d2', 'd1']);
      expect((await store.listDeliveries({ limit: 1 })).map(({ id }) => id)).toEqual(['d2']);
      expect((await store.listDeliveries({ sessionPrefix: 'acme/' })).map(({ id }) => id)).toEqual(['d2']);
      expect(
        (await store.listDeliveries({ sessionId: 's1', status: 'pending' })).map(({ id }) => id),
      ).toEqual(['d1']);
      expect(await store.listDeliveries({ status: 'failed' })).toEqual([]);
      expect(await store.countDeliveries({ status: 'pending' })).toBe(2);
      expect(await store.countDeliveries({ status: 'pending', sessionPrefix: 'acme/' })).toBe(1);
    });

    it('gives each due delivery to one claimer until its hold lapses, and keeps what its attempt made of it', async () => {
      await store.write({
        calls: [makeCallRecord({ callId: 'c1' })],
        notifications: [
          makeNotification({ id: 'n1', callId: 'c1' }),
          makeNotification({ id: 'n2', callId: 'c1' }),
          makeNotification({ id: 'n3', callId: 'c1' }),
        ],
        deliveries: [
          makeDelivery({ id: 'late', notificationId: 'n1', callId: 'c1', nextAt: 40_000 }),
          makeDelivery({ id: 'second', notificationId: 'n2', callId: 'c1', nextAt: 1_500 }),
          makeDelivery({ id: 'first', notificationId: 'n3', callId: 'c1', nextAt: 1_000 }),
        ],
      });
      const ids = (deliveries: WebhookDelivery[]) => deliveries.map(({ id }) => id);
      const [a, b] = await Promise.all([
        store.claimDeliveries('w1', 2_000, 10_000, 10),
        store.claimDeliveries('w2', 2_000, 10_000, 10),
      ]);
      expect([...ids(a), ...ids(b)].sort()).toEqual(['first', 'second']);
      const mine = a.length > 0 ? { owner: 'w1', claimed: a } : { owner: 'w2', claimed: b };
      expect(ids(mine.claimed)).toEqual(['first', 'second']);
      expect(await store.claimDeliveries('w3', 11_999, 10_000, 10)).toEqual([]);

      // The first attempt failed: it is tried again later; the second delivered.
      const [first, second] = mine.claimed as [WebhookDelivery, WebhookDelivery];
      const retried: WebhookDelivery = {
        ...first,
        attempts: 1,
        nextAt: 17_000,
        lastAttempt: { at: 2_000, url: 'https://hooks.example.com/baton', status: 503 },
      };
      expect(await store.settleDelivery(retried, mine.owner)).toBe(true);
      const delivered: WebhookDelivery = { ...second, status: 'delivered', attempts: 1, deliveredAt: 2_000 };
      expect(await store.settleDelivery(delivered, 'someone-else')).toBe(false);
      expect(await store.settleDelivery(delivered, mine.owner)).toBe(true);
      expect((await store.listDeliveries({ status: 'delivered' }))[0]).toEqual(delivered);

      // Past its hold a delivery nobody settled is taken again; its first holder can no longer settle it.
      expect(ids(await store.claimDeliveries('w3', 16_999, 10_000, 10))).toEqual([]);
      expect(ids(await store.claimDeliveries('w3', 17_000, 10_000, 10))).toEqual(['first']);
      expect(await store.settleDelivery({ ...retried, attempts: 2 }, mine.owner)).toBe(false);
      // w3 never settled it either: once its hold lapses it is due again, before the later one.
      expect(ids(await store.claimDeliveries('w4', 50_000, 10_000, 10))).toEqual(['first', 'late']);
      expect((await store.listDeliveries({ callId: 'c1' })).find(({ id }) => id === 'first')).toEqual(
        retried,
      );
    });

    it('refuses another event under a seq a call already has: numbering has no gaps and no repeats', async () => {
      const other = (seq: number) => ({ ...statusEvent('c1', seq), text: 'another' });
      await store.write({ calls: [makeCallRecord({ callId: 'c1' })], events: [statusEvent('c1', 1)] });
      await expect(store.write({ events: [other(1)] })).rejects.toThrow();
      expect((await store.listEvents('c1')).map((event) => event.seq)).toEqual([1]);
      await store.write({ events: [statusEvent('c1', 2), statusEvent('c1', 3), statusEvent('c1', 4)] });
      await expect(store.write({ events: [other(3)] })).rejects.toThrow();
      await expect(store.write({ events: [statusEvent('c1', 5), statusEvent('c1', 5)] })).rejects.toThrow();
      expect((await store.listEvents('c1')).map((event) => event.seq)).toEqual([1, 2, 3, 4]);
    });

    it('takes a write made again after it was stored (its answer lost) as written: every row kept once, nothing changed', async () => {
      const started = makeCallRecord({ callId: 'c1', status: 'inline', startedAt: 2 });
      await store.write({ calls: [started], events: [statusEvent('c1', 1), statusEvent('c1', 2)] });
      const ended = { ...started, status: 'succeeded' as const, endedAt: 5, output: 'done' };
      const end: StoreWrite = {
        calls: [ended],
        events: [statusEvent('c1', 3), statusEvent('c1', 4)],
        notifications: [makeNotification({ id: 'n1', callId: 'c1' })],
        deliveries: [makeDelivery({ id: 'd1', notificationId: 'n1', callId: 'c1' })],
        artifacts: [{ callId: 'c1', name: 'result.json', content: '{}' }],
        steps: [{ callId: 'c1', stepId: 'fetch', value: 1 }],
        resolutions: [{ key: 'k1', callId: 'c1', outcome: { value: 1 }, at: 4 }],
      };
      await store.write(end);
      // The session took its result meanwhile: the same write again leaves that as it is.
      expect(await store.acknowledgeNotification('n1', 6)).toBe(true);
      await store.write(end);
      expect(await store.getCall('c1')).toEqual(ended);
      expect(await store.listEvents('c1')).toEqual([1, 2, 3, 4].map((seq) => statusEvent('c1', seq)));
      expect((await store.listSessionEvents('s1')).map(({ event }) => event.seq)).toEqual([1, 2, 3, 4]);
      expect(await store.listNotifications()).toMatchObject([{ id: 'n1', status: 'acknowledged' }]);
      expect((await store.listDeliveries()).map(({ id }) => id)).toEqual(['d1']);
      expect(await store.listArtifacts('c1')).toEqual(['result.json']);
      expect(await store.listSteps('c1')).toEqual([{ callId: 'c1', stepId: 'fetch', value: 1 }]);
    });

    it('takes a write of first records made again (its answer lost) as written, and a wrong hint as no hint', async () => {
      const records = ['c1', 'c2'].map((callId) =>
        makeCallRecord({ callId, status: 'succeeded', endedAt: 5 }),
      );
      const write: StoreWrite = {
        calls: records,
        events: records.map((record) => statusEvent(record.callId, 1)),
        firstRecords: ['c1', 'c2'],
      };
      await store.write(write);
      await store.write(write);
      expect(await store.getCalls(['c1', 'c2'])).toEqual(records);
      expect((await store.listSessionEvents('s1')).map(({ event }) => event.callId)).toEqual(['c1', 'c2']);
      // A record named first that is not: the write changes the stored call as it would unnamed.
      const queued = makeCallRecord({ callId: 'c3' });
      await store.write({ calls: [queued], events: [statusEvent('c3', 1)] });
      const started = { ...queued, status: 'inline' as const };
      await store.write({ calls: [started], events: [statusEvent('c3', 2)], firstRecords: ['c3'] });
      expect(await store.getCall('c3')).toEqual(started);
    });

    it('refuses a write that makes a call whose id is taken, whole; the same write made again is taken', async () => {
      const first = makeCallRecord({ callId: 'c1', createdAt: 1 });
      const make = (record: CallRecord): StoreWrite => ({
        calls: [record, makeCallRecord({ callId: `other-${record.createdAt}` })],
        events: [{ ...statusEvent('c1', 1), at: record.createdAt }],
        newCalls: [record.callId, `other-${record.createdAt}`],
      });
      await store.write(make(first));
      // The same id, sent to another process at once: its call is not this one.
      await expect(store.write(make(makeCallRecord({ callId: 'c1', createdAt: 2 })))).rejects.toThrow();
      expect(await store.getCall('c1')).toEqual(first);
      expect(await store.getCall('other-2')).toBeUndefined();
      expect(await store.listEvents('c1')).toEqual([{ ...statusEvent('c1', 1), at: 1 }]);
      await store.write(make(first));
      expect(await store.getCall('c1')).toEqual(first);
      // A write that does not make it changes it as ever.
      await store.write({ calls: [{ ...first, status: 'inline' }] });
      expect((await store.getCall('c1'))?.status).toBe('inline');
    });

    it('writes a batch whole or not at all', async () => {
      await store.write({ calls: [makeCallRecord({ callId: 'c1' })], events: [statusEvent('c1', 1)] });
      await expect(
        store.write({
          calls: [makeCallRecord({ callId: 'c1', status: 'succeeded' }), makeCallRecord({ callId: 'c2' })],
          events: [statusEvent('c1', 2), statusEvent('c1', 1)],
        }),
      ).rejects.toThrow();
      expect((await store.getCall('c1'))?.status).toBe('queued');
      expect(await store.getCall('c2')).toBeUndefined();
      expect((await store.listEvents('c1')).map((event) => event.seq)).toEqual([1]);
    });

    it('keeps the artifacts of a call by name', async () => {
      await store.write({
        calls: [makeCallRecord({ callId: 'c1' })],
        artifacts: [
          { callId: 'c1', name: 'output.log', content: '[stdout] hi' },
          { callId: 'c1', name: 'result.json', content: '{}' },
        ],
      });
      await store.write({ artifacts: [{ callId: 'c1', name: 'result.json', content: '{"ok":true}' }] });
      expect(await store.getArtifact('c1', 'result.json')).toBe('{"ok":true}');
      expect((await store.listArtifacts('c1')).sort()).toEqual(['output.log', 'result.json']);
      expect(await store.getArtifact('c1', 'missing')).toBeUndefined();
    });

    it('keeps the finished durable steps of a call, replaced by step id', async () => {
      await store.write({
        calls: [makeCallRecord({ callId: 'c1' })],
        steps: [
          { callId: 'c1', stepId: 'fetch', value: { pages: 3 } },
          { callId: 'c1', stepId: 'parse', value: 'draft' },
        ],
      });
      await store.write({ steps: [{ callId: 'c1', stepId: 'parse', value: 'final' }] });
      const steps = await store.listSteps('c1');
      expect(steps.sort((a, b) => a.stepId.localeCompare(b.stepId))).toEqual([
        { callId: 'c1', stepId: 'fetch', value: { pages: 3 } },
        { callId: 'c1', stepId: 'parse', value: 'final' },
      ]);
      expect(await store.listSteps('other')).toEqual([]);
    });

    it('keeps the first resolution of an external event', async () => {
      await store.write({
        calls: [makeCallRecord({ callId: 'c1' })],
        resolutions: [{ key: 'k1', callId: 'c1', outcome: { value: { approved: true } }, at: 5 }],
      });
      await store.write({
        resolutions: [{ key: 'k1', callId: 'c1', outcome: { error: 'too late' }, at: 6 }],
      });
      expect(await store.getResolution('k1')).toEqual({
        key: 'k1',
        callId: 'c1',
        outcome: { value: { approved: true } },
        at: 5,
      });
      expect(await store.getResolution('missing')).toBeUndefined();
    });

    it('keeps schedules, listed by session and by whether they are enabled', async () => {
      await store.write({
        schedules: [makeSchedule({ id: 'a' }), makeSchedule({ id: 'b', sessionId: 's2', enabled: false })],
      });
      expect((await store.listSchedules()).map((schedule) => schedule.id).sort()).toEqual(['a', 'b']);
      expect((await store.listSchedules({ sessionId: 's2' })).map((schedule) => schedule.id)).toEqual(['b']);
      expect((await store.listSchedules({ enabled: true })).map((schedule) => schedule.id)).toEqual(['a']);
    });

    it('lets exactly one claimer fire a schedule that is due', async () => {
      await store.write({ schedules: [makeSchedule({ id: 'a', nextAt: 10_000 })] });
      const claims = await Promise.all([
        store.claimFiring('a', 10_000, { nextAt: 20_000, enabled: true }),
        store.claimFiring('a', 10_000, { nextAt: 20_000, enabled: true }),
      ]);
      expect(claims.sort()).toEqual([false, true]);
      expect(await store.listSchedules()).toEqual([makeSchedule({ id: 'a', nextAt: 20_000, firings: 1 })]);
      expect(await store.claimFiring('a', 20_000, { enabled: false })).toBe(true);
      const [done] = await store.listSchedules();
      expect(done).toMatchObject({ enabled: false, firings: 2 });
      expect(done?.nextAt).toBeUndefined();
      expect(await store.claimFiring('a', 20_000, { enabled: false })).toBe(false);
    });

    it('keeps runtime instances and their heartbeats', async () => {
      await store.registerInstance(makeInstance({ id: 'i1' }));
      await store.registerInstance(makeInstance({ id: 'i2', pid: 99, protocol: 1 }));
      expect(await store.heartbeat('i1', 4_000)).toBe(true);
      expect(await store.heartbeat('unknown', 4_000)).toBe(false);
      expect((await store.listInstances()).sort((a, b) => a.id.localeCompare(b.id))).toEqual([
        makeInstance({ id: 'i1', heartbeatAt: 4_000 }),
        makeInstance({ id: 'i2', pid: 99, protocol: 1 }),
      ]);
      await store.removeInstance('i2');
      expect((await store.listInstances()).map((instance) => instance.id)).toEqual(['i1']);
    });

    it('claims the unfinished calls of gone instances once, and forgets those instances', async () => {
      await store.registerInstance(makeInstance({ id: 'dead' }));
      await store.registerInstance(makeInstance({ id: 'alive' }));
      await store.write({
        calls: [
          makeCallRecord({ callId: 'inline', ownerId: 'dead', status: 'inline' }),
          makeCallRecord({ callId: 'bg', ownerId: 'dead', status: 'backgrounded' }),
          makeCallRecord({ callId: 'done', ownerId: 'dead', status: 'succeeded', endedAt: 5 }),
          makeCallRecord({ callId: 'theirs', ownerId: 'alive', status: 'inline' }),
        ],
      });
      const claimed = await store.claimCalls(['dead'], 'me');
      expect(claimed.map((call) => [call.callId, call.ownerId]).sort()).toEqual([
        ['bg', 'me'],
        ['inline', 'me'],
      ]);
      expect((await store.getCall('bg'))?.ownerId).toBe('me');
      expect((await store.getCall('done'))?.ownerId).toBe('dead');
      expect(await store.claimCalls(['dead'], 'someone-else')).toEqual([]);
      expect((await store.listInstances()).map((instance) => instance.id)).toEqual(['alive']);
    });

    it('tells which unfinished calls an instance holds, each with its last seq: those of a claim whose answer was lost included', async () => {
      await store.write({
        calls: [
          makeCallRecord({ callId: 'q1' }),
          makeCallRecord({ callId: 'q2' }),
          makeCallRecord({ callId: 'running', ownerId: 'w1', status: 'inline' }),
          makeCallRecord({ callId: 'ended', ownerId: 'w1', status: 'succeeded', endedAt: 5 }),
          makeCallRecord({ callId: 'theirs', ownerId: 'w2', status: 'backgrounded' }),
        ],
      });
      await store.write({ events: [statusEvent('running', 1), statusEvent('running', 2)] });
      // A claim made, whose answer never came back.
      await store.claimQueued('w1', 1);
      const held = await store.heldBy?.('w1');
      expect(held?.map(({ record, lastSeq }) => [record.callId, record.ownerId, lastSeq]).sort()).toEqual([
        ['q1', 'w1', 0],
        ['running', 'w1', 2],
      ]);
      expect(await store.heldBy?.('nobody')).toEqual([]);
    });

    it('gives each queued call that no instance owns to one claimer, oldest first', async () => {
      await store.write({
        calls: [
          makeCallRecord({ callId: 'q1' }),
          makeCallRecord({ callId: 'owned', ownerId: 'someone' }),
          makeCallRecord({ callId: 'q2' }),
          makeCallRecord({ callId: 'approval', approval: 'pending' }),
          makeCallRecord({ callId: 'running', status: 'inline' }),
          makeCallRecord({ callId: 'q3' }),
          makeCallRecord({ callId: 'q4' }),
        ],
      });
      await store.write({ events: [statusEvent('q2', 1), statusEvent('q2', 2)] });
      const first = await store.claimQueued('w1', 2);
      expect(first.map(({ record, lastSeq }) => [record.callId, record.ownerId, lastSeq])).toEqual([
        ['q1', 'w1', 0],
        ['q2', 'w1', 2],
      ]);
      const ids = (claimed: ClaimedCall[] | undefined) => (claimed ?? []).map(({ record }) => record.callId);
      expect(ids(await store.claimQueued('w2', 1, 'q4'))).toEqual(['q4']);
      expect(await store.claimQueued('w3', 5, 'q1')).toEqual([]);
      expect(ids(await store.claimQueued('w3', 1, 'approval'))).toEqual(['approval']);
      const [a, b] = await Promise.all([store.claimQueued('w4', 10), store.claimQueued('w5', 10)]);
      expect([...ids(a), ...ids(b)]).toEqual(['q3']);
      expect((await store.getCall('q2'))?.ownerId).toBe('w1');
      expect((await store.getCall('owned'))?.ownerId).toBe('someone');
    });

    it('deletes calls that ended before a time, with their events and artifacts, and keeps the rest', async () => {
      await store.write({
        calls: [
          makeCallRecord({ callId: 'old', status: 'succeeded', createdAt: 5, endedAt: 10 }),
          makeCallRecord({ callId: 'new', status: 'succeeded', createdAt: 5, endedAt: 30 }),
          makeCallRecord({ callId: 'running', status: 'backgrounded', createdAt: 5 }),
        ],
        events: [statusEvent('old', 1), statusEvent('new', 1)],
        artifacts: [{ callId: 'old', name: 'output.log', content: 'x' }],
        steps: [{ callId: 'old', stepId: 'a', value: 1 }],
        resolutions: [{ key: 'old-event', callId: 'old', outcome: { cancelled: true }, at: 1 }],
        notifications: [
          makeNotification({ id: 'n-sent', callId: 'old' }),
          makeNotification({ id: 'n-due', callId: 'old' }),
        ],
        deliveries: [
          makeDelivery({ id: 'sent', notificationId: 'n-sent', callId: 'old', status: 'delivered' }),
          makeDelivery({ id: 'due', notificationId: 'n-due', callId: 'old' }),
        ],
      });
      expect(await store.deleteEndedBefore(20, 0)).toBe(0);
      expect(await store.getCall('old')).toBeDefined();
      expect(await store.deleteEndedBefore(20)).toBe(1);
      expect(await store.getCall('old')).toBeUndefined();
      expect(await store.listEvents('old')).toEqual([]);
      expect((await store.listSessionEvents('s1')).map(({ event }) => event.callId)).toEqual(['new']);
      expect(await store.getArtifact('old', 'output.log')).toBeUndefined();
      expect(await store.listSteps('old')).toEqual([]);
      expect(await store.getResolution('old-event')).toBeUndefined();
      // A pending delivery stays, as a notification not yet acknowledged does.
      expect((await store.listDeliveries()).map(({ id }) => id)).toEqual(['due']);
      expect((await store.listCalls()).calls.map((call) => call.callId).sort()).toEqual(['new', 'running']);
    });
  });
}
