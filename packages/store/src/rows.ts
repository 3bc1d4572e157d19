import { BatonError, type RuntimeInstance, type Schedule } from '@baton/contracts';

/** A runtime instance as SQL adapters keep it, one column per field. */
export interface InstanceRow {
  id: string;
  host: string;
  pid: number;
  boot: string;
  started_at: number;
  heartbeat_at: number;
  lease_ms: number;
}

export function instanceOfRow(row: InstanceRow): RuntimeInstance {
  return {
    id: row.id,
    host: row.host,
    pid: row.pid,
    boot: row.boot,
    startedAt: row.started_at,
    heartbeatAt: row.heartbeat_at,
    leaseMs: row.lease_ms,
  };
}

/** A schedule after the firing that `claimFiring` claimed: one firing more, moved on to `next`. */
export function scheduleAfterFiring(
  schedule: Schedule,
  next: { nextAt?: number; enabled: boolean },
): Schedule {
  const claimed: Schedule = { ...schedule, enabled: next.enabled, firings: schedule.firings + 1 };
  if (next.nextAt === undefined) delete claimed.nextAt;
  else claimed.nextAt = next.nextAt;
  return claimed;
}

/**
 * The store position a `listCalls` cursor stands for. Cursors are the positions the stores give
 * out (whole numbers); anything else is refused with `invalid_arguments` the same way on every
 * store, rather than read as NaN (an empty page) or as Infinity (every call).
 */
export function cursorPosition(cursor: string | undefined): number | undefined {
  if (cursor === undefined) return undefined;
  const position = /^\d{1,15}$/.test(cursor) ? Number(cursor) : Number.NaN;
  if (!Number.isSafeInteger(position)) {
    throw new BatonError(
      'invalid_arguments',
      `the cursor ${JSON.stringify(cursor.slice(0, 40))} is not one a page of calls gave`,
    );
  }
  return position;
}
