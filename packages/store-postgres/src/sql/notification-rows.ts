import type { Notification } from '@baton/contracts';
import type { QueryResultRow } from 'pg';

/** What the statements that return notifications read of a row of `notifications`. */
export type NotificationRow = {
  notification: Notification;
  status: Notification['status'];
  acknowledged_at: number | null;
};

export function notificationOf(row: NotificationRow): Notification {
  const notification = row.notification;
  notification.status = row.status;
  if (row.acknowledged_at !== null) notification.acknowledgedAt = row.acknowledged_at;
  return notification;
}

/** A statement of the store's: rows of `text` with its `values`; with `name`, prepared once per connection. */
export type Query = <R extends QueryResultRow>(
  text: string,
  values: unknown[],
  name?: string,
) => Promise<R[]>;
