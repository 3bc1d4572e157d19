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

/** What a call has told its session and not yet been given: the notifications that what it tells next replaces. */
export interface ToldBefore {
  /** Its latest update's notification. */
  updateNotificationId?: string;
  /** Its latest reminder's (`notifyAfterMs`) notification. */
  reminderNotificationId?: string;
  /** Those already replaced by a later one (a process died before it acknowledged them). */
  replaced: string[];
}

/**
 * What replaces what, read back from the store for a call another process took up: of the call's
 * queued notifications (oldest first), the update and the reminder that a newer one or the end
 * will replace, and those replaced already.
 */
export function toldBefore(queued: readonly Notification[], callId: string): ToldBefore {
  const ofCall = queued.filter((notification) => notification.callId === callId);
  const replaced = replacedUpdates(ofCall);
  const told: ToldBefore = { replaced: [...replaced] };
  for (const notification of ofCall) {
    if (replaced.has(notification.id) || notification.outcome !== 'running') continue;
    if (notification.updateSeq !== undefined) told.updateNotificationId = notification.id;
    else told.reminderNotificationId = notification.id;
  }
  return told;
}
