import { afterEach, beforeEach, describe } from 'vitest';
import { describeCallFiles } from './conformance/call-files.js';
import { describeCalls } from './conformance/calls.js';
import { describeEvents } from './conformance/events.js';
import { describeInstancesAndClaims } from './conformance/instances-and-claims.js';
import { describeNotices } from './conformance/notices.js';
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
import { describeRetention } from './conformance/retention.js';
import { describeWrites } from './conformance/writes.js';
import type { Store } from './store.js';

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

    describeCalls(() => store);
    describeEvents(() => store);
    describeNotices(() => store);
    describeWrites(() => store);
    describeCallFiles(() => store);
    describeInstancesAndClaims(() => store);
    describeRetention(() => store);
  });
}
