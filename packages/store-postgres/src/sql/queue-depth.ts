import type { QueueDepth } from '@baton/store';
import type { Query } from './notification-rows.js';

/**
 * The calls waiting for a worker, and when the oldest was made: the queue's rows, which the
 * writes keep to the claimable calls (queued, owned by none, not waiting for approval).
 */
export async function queueDepth(query: Query): Promise<QueueDepth> {
  // min() of a bigint is read as text.
  const [row] = await query<{ calls: number; oldest: string | null }>(
    `SELECT count(*)::int AS calls, min(c.created_at) AS oldest
     FROM call_queue AS q JOIN calls AS c ON c.position = q.position`,
    [],
    'baton_queue_depth',
  );
  return { calls: row?.calls ?? 0, oldestCreatedAt: row?.oldest == null ? undefined : Number(row.oldest) };
}
