import { BatonError, type CallEvent, type RuntimeInstance, type Schedule } from '@baton/contracts';

/** A runtime instance as SQL adapters keep it, one column per field. */
export interface InstanceRow {
  id: string;
  host: string;
  pid: number;
  boot: string;
  started_at: number;
  heartbeat_at: number;
  lease_ms: number;
  /** Absent from a store before the column was made. */
  protocol?: number;
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
    protocol: row.protocol ?? 0,
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

/**
 * At most this many events in a row of events (SQL adapters keep a call's events of one write in
 * one row). Rows take positions this far apart, and a row's n-th event is at its position + n - 1,
 * so 2^45 rows fit below 2^53, the largest position a JavaScript number holds exactly.
 */
export const ROW_EVENTS_MAX = 256;

/** Events of one call with consecutive seqs, `seq` to `lastSeq`: one row of an SQL adapter's events. */
export interface EventRow {
  callId: string;
  sessionId: string;
  seq: number;
  lastSeq: number;
  events: CallEvent[];
}

/**
 * A batch's events as rows, in the order of each call's first event: a call's events in one row
 * while their seqs run on (a new row after a gap, or after `ROW_EVENTS_MAX`). So a session's
 * events of one write come grouped by call, each call's in order. The events of one call must
 * come in the order of their seqs: a write that repeats one is refused whole, here or by the
 * database.
 */
export function eventRowsOf(events: readonly CallEvent[]): EventRow[] {
  const lastRowOfCall = new Map<string, EventRow>();
  const rows: EventRow[] = [];
  for (const event of events) {
    const last = lastRowOfCall.get(event.callId);
    if (last && event.seq <= last.lastSeq) {
      throw new Error(
        `event ${event.seq} of call ${event.callId} follows its event ${last.lastSeq} in one write: a call's events go in the order of their seqs, each once`,
      );
    }
    if (last && event.seq === last.lastSeq + 1 && last.events.length < ROW_EVENTS_MAX) {
      last.events.push(event);
      last.lastSeq = event.seq;
      continue;
    }
    const { callId, sessionId, seq } = event;
    const row: EventRow = { callId, sessionId, seq, lastSeq: seq, events: [event] };
    rows.push(row);
    lastRowOfCall.set(callId, row);
  }
  return rows;
}
