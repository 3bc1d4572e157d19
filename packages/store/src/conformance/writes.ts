import type { CallRecord } from '@baton/contracts';
import { beforeEach, describe, expect, it } from 'vitest';
import type { Store, StoreWrite } from '../store.js';
import { makeCallRecord, makeDelivery, makeNotification, statusEvent } from './records.js';

/** A write is whole or nothing; one made again after its answer was lost is taken as written; a clash is refused. `storeOf` is the test's fresh store. */
export function describeWrites(storeOf: () => Store): void {
  describe('writes: whole, and taken once when made again', () => {
    let store: Store;
    beforeEach(() => {
      store = storeOf();
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
  });
}
