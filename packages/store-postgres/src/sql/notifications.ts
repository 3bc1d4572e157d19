import type { Notification } from '@baton/contracts';
import type { NotificationCountFilter, NotificationFilter } from '@baton/store';
import { type NotificationRow, notificationOf, type Query } from './notification-rows.js';
import { sessionConditions, whereOf } from './where.js';

export async function listNotifications(
  query: Query,
  filter: NotificationFilter = {},
): Promise<Notification[]> {
  const { where, params } = whereOf([
    ...sessionConditions(filter),
    filter.status === undefined ? undefined : ['status = ?', filter.status],
    filter.id === undefined ? undefined : ['id = ?', filter.id],
    filter.after === undefined
      ? undefined
      : [
          '(created_at, position) > (SELECT created_at, position FROM notifications WHERE id = ?)',
          filter.after,
        ],
  ]);
  const limit = filter.limit === undefined ? '' : ` LIMIT ${Math.max(0, Math.floor(filter.limit))}`;
  const rows = await query<NotificationRow>(
    `SELECT notification, status, acknowledged_at FROM notifications ${where} ORDER BY created_at, position${limit}`,
    params,
  );
  return rows.map(notificationOf);
}

export async function countNotifications(
  query: Query,
  filter: NotificationCountFilter = {},
): Promise<number> {
  const { where, params } = whereOf([
    ...sessionConditions(filter),
    filter.status === undefined ? undefined : ['status = ?', filter.status],
  ]);
  const [row] = await query<{ count: string }>(
    `SELECT COUNT(*) AS count FROM notifications ${where}`,
    params,
  );
  return Number(row?.count ?? 0);
}

export async function acknowledgeNotification(query: Query, id: string, at: number): Promise<boolean> {
  const rows = await query(
    "UPDATE notifications SET status = 'acknowledged', acknowledged_at = $1 WHERE id = $2 AND status = 'queued' RETURNING id",
    [at, id],
  );
  return rows.length === 1;
}
