import type { CallRecord, Notification } from '@baton/contracts';

/** A row of `calls` as the queries that return records read it. */
export type CallRow = { position: number; record: string; owner_id: string | null };

export function recordOf(row: CallRow): CallRecord {
  const record = JSON.parse(row.record) as CallRecord;
  if (row.owner_id !== null) record.ownerId = row.owner_id;
  return record;
}

/** A row of `notifications` as the queries that return notifications read it. */
export type NotificationRow = {
  notification: string;
  status: Notification['status'];
  acknowledged_at: number | null;
};

export function notificationOf(row: NotificationRow): Notification {
  const notification = JSON.parse(row.notification) as Notification;
  notification.status = row.status;
  if (row.acknowledged_at !== null) notification.acknowledgedAt = row.acknowledged_at;
  return notification;
}

export const UNFINISHED = "status NOT IN ('succeeded', 'failed', 'cancelled', 'timed_out')";
