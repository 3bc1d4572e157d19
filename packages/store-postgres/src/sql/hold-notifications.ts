import type { Notification } from '@baton/contracts';
import type { NotificationHold } from '@baton/store';
import { type NotificationRow, notificationOf, type Query } from './notification-rows.js';

/**
 * Holds the session's queued notifications of the schedulings asked that no registered instance
 * holds, for `holder`, in one statement: rows another hold is taking at the same moment are
 * skipped (SKIP LOCKED), so each is held by one.
 */
export async function holdNotifications(
  query: Query,
  { sessionId, schedulings, holder }: NotificationHold,
): Promise<Notification[]> {
  const rows = await query<NotificationRow & { position: number; created_at: number }>(
    `UPDATE notifications AS n SET held_by = $1
     WHERE n.position IN (
       SELECT position FROM notifications
       WHERE session_id = $2 AND status = 'queued' AND notification->>'scheduling' = ANY($3)
         AND (held_by IS NULL OR NOT EXISTS (SELECT 1 FROM instances AS i WHERE i.id = held_by))
       FOR UPDATE SKIP LOCKED)
     RETURNING n.position, n.created_at, n.notification, n.status, n.acknowledged_at`,
    [holder, sessionId, schedulings],
    'baton_hold_notifications',
  );
  rows.sort((a, b) => a.created_at - b.created_at || a.position - b.position);
  return rows.map(notificationOf);
}

/** Ends `holder`'s holds of these notifications: they are due again. */
export async function releaseNotifications(
  query: Query,
  ids: readonly string[],
  holder: string,
): Promise<void> {
  await query(
    'UPDATE notifications SET held_by = NULL WHERE held_by = $1 AND id = ANY($2)',
    [holder, ids],
    'baton_release_notifications',
  );
}
