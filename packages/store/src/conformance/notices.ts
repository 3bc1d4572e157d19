import type { WebhookDelivery } from '@baton/contracts';
import { beforeEach, describe, expect, it } from 'vitest';
import type { Store } from '../store.js';
import { makeCallRecord, makeDelivery, makeNotification } from './records.js';

/** Notifications, oldest first, acknowledged once; webhook deliveries kept with them and claimed by one process at a time. `storeOf` is the test's fresh store. */
export function describeNotices(storeOf: () => Store): void {
  describe('notifications and webhook deliveries', () => {
    let store: Store;
    beforeEach(() => {
      store = storeOf();
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
  });
}
