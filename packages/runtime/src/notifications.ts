import type { Notification } from '@baton/contracts';
import type { Runtime } from './options.js';

/** Seed 001: whether a queued notification is given now. */
function isDue(notification: Notification, idle: boolean): boolean {
  return notification.scheduling === 'interrupt' || (notification.scheduling === 'when_idle' && idle);
}

/** The session's due notifications, each acknowledged first: one another loop took is not given twice. */
export async function takeNotifications(
  notifications: Pick<Runtime['notifications'], 'list' | 'ack'>,
  { sessionId, idle }: { sessionId: string; idle: boolean },
): Promise<Notification[]> {
  const taken: Notification[] = [];
  for (const notification of await notifications.list({ sessionId, status: 'queued' })) {
    const due = isDue(notification, idle);
    if (notification.scheduling !== 'silent' && !due) continue;
    if ((await notifications.ack(notification.id)) && due) taken.push(notification);
  }
  return taken;
}
