import type { CallRecord } from '@baton/contracts';
import type { QueueDepth } from './store.js';

/** The queue among some records: those `claimQueued` would give (queued, owned by none, not waiting for approval). */
export function queueDepthOf(records: readonly CallRecord[]): QueueDepth {
  let calls = 0;
  let oldestCreatedAt: number | undefined;
  for (const { ownerId, status, approval, createdAt } of records) {
    if (ownerId !== undefined || status !== 'queued' || approval === 'pending') continue;
    calls++;
    oldestCreatedAt = Math.min(oldestCreatedAt ?? createdAt, createdAt);
  }
  return { calls, oldestCreatedAt };
}
