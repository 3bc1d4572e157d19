import type { Notification } from './call.js';

/** What a model reads of a notification, in every bridge: its title, then its body. */
export function notificationText(notification: Pick<Notification, 'title' | 'body'>): string {
  return `${notification.title}\n${notification.body}`;
}
