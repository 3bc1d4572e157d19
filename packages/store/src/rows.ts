import type { RuntimeInstance, Schedule } from '@baton/contracts';

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
