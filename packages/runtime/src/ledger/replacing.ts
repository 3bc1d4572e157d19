import type { Notification } from '@baton/contracts';

/**
 * Of the notifications a loop holds, those a later one of the same call replaces: an update by a
 * newer update or the end; a reminder that the call still runs by a newer one, an update or the
 * end. They are acknowledged rather than given.
 */
export function replacedUpdates(held: readonly Notification[]): Set<string> {
  const replaced = new Set<string>();
  /** By call: what the notifications after the one looked at say (read from the last). */
  const later = new Map<string, { end: boolean; update: boolean; reminder: boolean }>();
  for (let index = held.length - 1; index >= 0; index--) {
    const notification = held[index] as Notification;
    const seen = later.get(notification.callId) ?? { end: false, update: false, reminder: false };
    const isUpdate = notification.outcome === 'running' && notification.updateSeq !== undefined;
    const isReminder = notification.outcome === 'running' && !isUpdate;
    if (
      (isUpdate && (seen.end || seen.update)) ||
      (isReminder && (seen.end || seen.update || seen.reminder))
    ) {
      replaced.add(notification.id);
    }
    later.set(notification.callId, {
      end: seen.end || notification.outcome !== 'running',
      update: seen.update || isUpdate,
      reminder: seen.reminder || isReminder,
    });
  }
  return replaced;
}
