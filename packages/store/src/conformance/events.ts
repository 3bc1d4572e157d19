import { beforeEach, describe, expect, it } from 'vitest';
import type { SessionEvent, Store } from '../store.js';
import { makeCallRecord, statusEvent } from './records.js';

/** A call's events and a session's: kept in the order they were stored, replayed after a seq or a position. `storeOf` is the test's fresh store. */
export function describeEvents(storeOf: () => Store): void {
  describe('events: kept in order and replayed', () => {
    let store: Store;
    beforeEach(() => {
      store = storeOf();
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
  });
}
