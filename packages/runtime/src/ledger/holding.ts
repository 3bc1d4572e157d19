import { isDueAt, type Notification, type Scheduling } from '@baton/contracts';
import type { StoreNotifications } from '@baton/store';
import type { Runtime } from '../runtime-api.js';
import { replacedUpdates } from './replacing.js';

const SCHEDULINGS: readonly Scheduling[] = ['interrupt', 'when_idle', 'silent'];

/**
 * The session's due notifications (the result scheduling), held for this instance in one store
 * operation. An update that a later one of its call replaces (a newer update, its end) is
 * acknowledged, not given.
 */
export async function holdDue(
  store: Pick<StoreNotifications, 'holdNotifications' | 'acknowledgeNotification'>,
  holder: string,
  now: () => number,
  { sessionId, idle }: { sessionId: string; idle: boolean },
): Promise<Notification[]> {
  const schedulings = SCHEDULINGS.filter((scheduling) => isDueAt({ scheduling }, { idle }));
  const held = await store.holdNotifications({ sessionId, schedulings, holder });
  const replaced = replacedUpdates(held);
  if (replaced.size === 0) return held;
  await Promise.all([...replaced].map((id) => store.acknowledgeNotification(id, now())));
  return held.filter((notification) => !replaced.has(notification.id));
}

/** The session's due notifications, held, then each acknowledged: one another loop took is not given twice. */
export async function takeNotifications(
  notifications: Pick<Runtime['notifications'], 'hold' | 'ack'>,
  request: { sessionId: string; idle: boolean },
): Promise<Notification[]> {
  const taken: Notification[] = [];
  for (const notification of await notifications.hold(request)) {
    if (await notifications.ack(notification.id)) taken.push(notification);
  }
  return taken;
}
