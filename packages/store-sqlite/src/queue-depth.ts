import type { QueueDepth } from '@baton/store';

/** The calls `claimQueued` would give (queued, owned by none, not waiting for approval), and the oldest's creation. */
export const QUEUE_DEPTH = `
  SELECT count(*) AS calls, min(json_extract(record, '$.createdAt')) AS oldest FROM calls
  WHERE owner_id IS NULL AND status = 'queued' AND json_extract(record, '$.approval') IS NOT 'pending'`;

export function queueDepthOf(row: { calls: number; oldest: number | null }): QueueDepth {
  return { calls: row.calls, oldestCreatedAt: row.oldest ?? undefined };
}
