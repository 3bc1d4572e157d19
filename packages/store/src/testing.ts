/**
 * `@baton/store/testing`: the conformance suite every Store adapter runs, and record builders for
 * tests. Uses vitest (an optional peer dependency of this package).
 */
import type { CallEvent, CallRecord, Notification } from '@baton/contracts';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Store } from './store.js';

export function makeCallRecord(overrides: Partial<CallRecord> & Pick<CallRecord, 'callId'>): CallRecord {
  return {
    sessionId: 's1',
    toolName: 'echo',
    args: {},
    status: 'queued',
    mode: 'inline',
    detached: false,
    attempt: 1,
    createdAt: 1_000,
    outputTail: '',
    ...overrides,
  };
}

export function makeNotification(
  overrides: Partial<Notification> & Pick<Notification, 'id' | 'callId'>,
): Notification {
  return {
    sessionId: 's1',
    toolName: 'echo',
    status: 'queued',
    outcome: 'succeeded',
    title: 'Task completed: Background tool: echo',
    body: 'Tool call:\necho({})\nReturn value:\nok',
    output: { status: 'completed', tool: 'echo', result: 'ok' },
    scheduling: 'when_idle',
    createdAt: 2_000,
    ...overrides,
  };
}

function statusEvent(callId: string, seq: number): CallEvent {
  return {
    type: 'status',
    callId,
    sessionId: 's1',
    toolName: 'echo',
    seq,
    at: 1_000 + seq,
    text: `step ${seq}`,
  };
}

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

    it('keeps a call and replaces it by callId', async () => {
      await store.write({ calls: [makeCallRecord({ callId: 'c1', args: { q: 'x' } })] });
      await store.write({ calls: [makeCallRecord({ callId: 'c1', status: 'succeeded', result: { n: 1 } })] });
      const record = await store.getCall('c1');
      expect(record).toMatchObject({ callId: 'c1', status: 'succeeded', result: { n: 1 } });
      expect(await store.getCall('missing')).toBeUndefined();
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
    });

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
      expect(await store.acknowledgeNotification('n1', 5)).toBe(true);
      expect(await store.acknowledgeNotification('n1', 6)).toBe(false);
      expect(await store.acknowledgeNotification('missing', 6)).toBe(false);
      expect((await store.listNotifications({ status: 'queued' })).map((n) => n.id)).toEqual(['n2']);
      expect(await store.listNotifications({ status: 'acknowledged' })).toMatchObject([
        { id: 'n1', acknowledgedAt: 5 },
      ]);
    });

    it('deletes calls that ended before a time, with their events, and keeps the rest', async () => {
      await store.write({
        calls: [
          makeCallRecord({ callId: 'old', status: 'succeeded', endedAt: 10 }),
          makeCallRecord({ callId: 'new', status: 'succeeded', endedAt: 30 }),
          makeCallRecord({ callId: 'running', status: 'backgrounded' }),
        ],
        events: [statusEvent('old', 1)],
      });
      expect(await store.deleteEndedBefore(20)).toBe(1);
      expect(await store.getCall('old')).toBeUndefined();
      expect(await store.listEvents('old')).toEqual([]);
      expect((await store.listCalls()).calls.map((call) => call.callId).sort()).toEqual(['new', 'running']);
    });
  });
}
