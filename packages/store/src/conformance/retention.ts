import { beforeEach, describe, expect, it } from 'vitest';
import type { Store } from '../store.js';
import { makeCallRecord, makeDelivery, makeNotification, statusEvent } from './records.js';

/** `deleteEndedBefore`: the calls that ended before a time, with what they kept, and nothing else. `storeOf` is the test's fresh store. */
export function describeRetention(storeOf: () => Store): void {
  describe('retention', () => {
    let store: Store;
    beforeEach(() => {
      store = storeOf();
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
