import { describe, expect, it } from 'vitest';
import type { Store } from '../store.js';
import { makeCallRecord, makeInstance, makeNotification } from './records.js';

/**
 * `holdNotifications` and `releaseNotifications`: a result given by one loop at a time, in any
 * process, and again once its holder is gone. `storeOf` is the suite's fresh store of the test.
 */
export function describeNotificationHolds(storeOf: () => Store): void {
  describe('notification holds', () => {
    const ALL = ['interrupt', 'when_idle', 'silent'] as const;
    /** Two instances registered, and in session s1 one notification per scheduling (and one of s2). */
    async function seeded(): Promise<Store> {
      const store = storeOf();
      await store.registerInstance(makeInstance({ id: 'loop-a' }));
      await store.registerInstance(makeInstance({ id: 'loop-b' }));
      await store.write({
        calls: ['c1', 'c2', 'c3', 'c4'].map((callId) => makeCallRecord({ callId })),
        notifications: [
          makeNotification({ id: 'n1', callId: 'c1', scheduling: 'interrupt', createdAt: 1 }),
          makeNotification({ id: 'n2', callId: 'c2', scheduling: 'when_idle', createdAt: 2 }),
          makeNotification({ id: 'n3', callId: 'c3', scheduling: 'silent', createdAt: 3 }),
          makeNotification({ id: 'n4', callId: 'c4', sessionId: 's2', createdAt: 4 }),
        ],
      });
      return store;
    }
    const ids = (notifications: readonly { id: string }[]) => notifications.map(({ id }) => id);

    it("holds the session's queued notifications of the schedulings asked, oldest first, and returns them whole", async () => {
      const store = await seeded();
      const held = await store.holdNotifications({
        sessionId: 's1',
        schedulings: ['interrupt', 'silent'],
        holder: 'loop-a',
      });
      expect(ids(held)).toEqual(['n1', 'n3']);
      expect(held[0]).toMatchObject({ callId: 'c1', status: 'queued', scheduling: 'interrupt' });
      // Held, not acknowledged: still queued.
      expect(ids(await store.listNotifications({ sessionId: 's1', status: 'queued' }))).toEqual([
        'n1',
        'n2',
        'n3',
      ]);
    });

    it('gives a notification to one holder at a time: another registered instance, or the same, gets none of it', async () => {
      const store = await seeded();
      const hold = (holder: string) => store.holdNotifications({ sessionId: 's1', schedulings: ALL, holder });
      const [first, second] = await Promise.all([hold('loop-a'), hold('loop-b')]);
      expect([...ids(first ?? []), ...ids(second ?? [])].sort()).toEqual(['n1', 'n2', 'n3']);
      expect(await hold('loop-a')).toEqual([]);
      expect(await hold('loop-b')).toEqual([]);
    });

    it('makes a released notification due again, and releases only the holds of the holder named', async () => {
      const store = await seeded();
      await store.holdNotifications({ sessionId: 's1', schedulings: ALL, holder: 'loop-a' });
      await store.releaseNotifications(['n1', 'n2'], 'loop-b');
      expect(await store.holdNotifications({ sessionId: 's1', schedulings: ALL, holder: 'loop-b' })).toEqual(
        [],
      );
      await store.releaseNotifications(['n1', 'n2'], 'loop-a');
      const again = await store.holdNotifications({ sessionId: 's1', schedulings: ALL, holder: 'loop-b' });
      expect(ids(again)).toEqual(['n1', 'n2']);
    });

    it('lets the holds of an instance no longer registered lapse: another takes them up', async () => {
      const store = await seeded();
      await store.holdNotifications({ sessionId: 's1', schedulings: ALL, holder: 'loop-a' });
      await store.removeInstance('loop-a');
      const taken = await store.holdNotifications({ sessionId: 's1', schedulings: ALL, holder: 'loop-b' });
      expect(ids(taken)).toEqual(['n1', 'n2', 'n3']);
    });

    it('never holds an acknowledged notification, and an acknowledgement ends a hold', async () => {
      const store = await seeded();
      await store.holdNotifications({ sessionId: 's1', schedulings: ['interrupt'], holder: 'loop-a' });
      expect(await store.acknowledgeNotification('n1', 10)).toBe(true);
      await store.releaseNotifications(['n1'], 'loop-a');
      expect(
        await store.holdNotifications({ sessionId: 's1', schedulings: ALL, holder: 'loop-b' }),
      ).toHaveLength(2);
      expect(ids(await store.listNotifications({ sessionId: 's1', status: 'queued' }))).toEqual(['n2', 'n3']);
    });
  });
}
