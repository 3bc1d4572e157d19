import type { WebhookDelivery } from '@baton/contracts';
import { DEFAULT_PAGE_SIZE, type DeliveryCountFilter, type DeliveryFilter } from '@baton/store';
import type { Query } from './notification-rows.js';
import { deliveryConditions, whereOf } from './where.js';

export async function claimDeliveries(
  query: Query,
  ownerId: string,
  now: number,
  leaseMs: number,
  limit: number,
): Promise<WebhookDelivery[]> {
  // SKIP LOCKED: processes that claim at once each take different deliveries, without waiting.
  const rows = await query<{ next_at: number; position: number; delivery: WebhookDelivery }>(
    `UPDATE webhook_deliveries SET owner_id = $1, lease_until = $2 WHERE position IN (
       SELECT position FROM webhook_deliveries
       WHERE status = 'pending' AND next_at <= $3 AND (lease_until IS NULL OR lease_until <= $3)
       ORDER BY next_at, position LIMIT $4 FOR UPDATE SKIP LOCKED)
     RETURNING next_at, position, delivery`,
    [ownerId, now + leaseMs, now, limit],
  );
  return rows.sort((a, b) => a.next_at - b.next_at || a.position - b.position).map((row) => row.delivery);
}

export async function settleDelivery(
  query: Query,
  delivery: WebhookDelivery,
  ownerId: string,
): Promise<boolean> {
  const rows = await query(
    `UPDATE webhook_deliveries SET status = $1, next_at = $2, owner_id = NULL, lease_until = NULL, delivery = $3
     WHERE id = $4 AND owner_id = $5 AND lease_until IS NOT NULL RETURNING id`,
    [delivery.status, delivery.nextAt, JSON.stringify(delivery), delivery.id, ownerId],
  );
  return rows.length === 1;
}

export async function listDeliveries(query: Query, filter: DeliveryFilter = {}): Promise<WebhookDelivery[]> {
  const { where, params, next } = whereOf(deliveryConditions(filter));
  const rows = await query<{ delivery: WebhookDelivery }>(
    `SELECT delivery FROM webhook_deliveries ${where} ORDER BY position DESC LIMIT $${next}`,
    [...params, filter.limit ?? DEFAULT_PAGE_SIZE],
  );
  return rows.map((row) => row.delivery);
}

export async function countDeliveries(query: Query, filter: DeliveryCountFilter = {}): Promise<number> {
  const { where, params } = whereOf(deliveryConditions(filter));
  const [row] = await query<{ count: string }>(
    `SELECT COUNT(*) AS count FROM webhook_deliveries ${where}`,
    params,
  );
  return Number(row?.count ?? 0);
}
