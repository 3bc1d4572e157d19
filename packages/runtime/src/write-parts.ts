import type { CallEvent, CallRecord } from '@baton/contracts';
import type { StoreWrite } from '@baton/store';

/** The rows of a write batch, cut into the parts (one call's, or one schedule's) that are written or refused together. */

/** What a batch lists besides the calls: events, notifications, deliveries, artifacts, steps, resolutions, schedules. */
export type ListedWrite = Exclude<keyof StoreWrite, 'calls' | 'writer' | 'newCalls' | 'firstRecords'>;

export type Listed = { [K in ListedWrite]: NonNullable<StoreWrite[K]>[number][] };

/** A part of a batch the store refused even when written on its own, and why. */
export interface RefusedWrite {
  /** The call the part belongs to (a schedule's part belongs to none). */
  callId: string | undefined;
  /** The call's record as it was in the batch, when the batch held one. */
  record: CallRecord | undefined;
  /** Every row of the part, to be written again as it is (`rewrite`) when the fault may pass. */
  rows: Rows;
  error: unknown;
  /** The part makes its call (`recordNew`): whoever made it hears of the refusal, and handles it. */
  made: boolean;
}

export interface PendingBatch extends Listed {
  calls: Map<string, CallRecord>;
  /** The calls (and schedules) with rows in the batch: two writes in flight never share one. */
  keys: string[];
  size: number;
  /** Resolves once the batch is written, or once each of its parts was written or refused. */
  written: Promise<void>;
  settle: () => void;
  /** Set when parts were refused: the error of each, by part. */
  refused?: Map<string, unknown>;
  /** The calls this batch makes (see `StoreWrite.newCalls`), when it makes any. */
  made?: Set<string>;
  /** The calls whose first record is in this batch, under ids made up here (see `StoreWrite.firstRecords`). */
  firsts?: Set<string>;
}

/** One call's rows of a batch (or one schedule's): what is written or refused together. */
export interface Part {
  key: string;
  write: Rows;
}

/** The call (or schedule) a row belongs to. */
export function keyOf(kind: keyof Rows, item: Rows[keyof Rows][number]): string {
  return kind === 'schedules'
    ? SCHEDULE_PART + (item as { id: string }).id
    : (item as { callId: string }).callId;
}

/** A batch's rows, or a part's. */
export type Rows = Listed & { calls: CallRecord[] };

export const SCHEDULE_PART = 'schedule:';

export function emptyWrite(): Rows {
  return {
    calls: [],
    events: [],
    notifications: [],
    deliveries: [],
    artifacts: [],
    steps: [],
    resolutions: [],
    schedules: [],
  };
}

/** The batch cut into parts, one per call (and per schedule), each with its rows in batch order. */
export function partsOf(batch: PendingBatch): Part[] {
  const parts = new Map<string, Part>();
  const partOf = (key: string): Rows => {
    let part = parts.get(key);
    if (!part) {
      part = { key, write: emptyWrite() };
      parts.set(key, part);
    }
    return part.write;
  };
  for (const record of batch.calls.values()) partOf(record.callId).calls.push(record);
  for (const event of batch.events) partOf(event.callId).events.push(event);
  for (const item of batch.notifications) partOf(item.callId).notifications.push(item);
  for (const item of batch.deliveries) partOf(item.callId).deliveries.push(item);
  for (const item of batch.artifacts) partOf(item.callId).artifacts.push(item);
  for (const item of batch.steps) partOf(item.callId).steps.push(item);
  for (const item of batch.resolutions) partOf(item.callId).resolutions.push(item);
  for (const item of batch.schedules) partOf(SCHEDULE_PART + item.id).schedules.push(item);
  return [...parts.values()];
}

export function rowsOf(write: Omit<Required<StoreWrite>, 'newCalls' | 'firstRecords' | 'writer'>): number {
  const { calls, events, notifications, deliveries, artifacts, steps, resolutions, schedules } = write;
  return (
    calls.length +
    events.length +
    notifications.length +
    deliveries.length +
    artifacts.length +
    steps.length +
    resolutions.length +
    schedules.length
  );
}

export function joined(parts: readonly Part[]): Rows {
  if (parts.length === 1) return (parts[0] as Part).write;
  const write = emptyWrite();
  for (const { write: part } of parts) {
    for (const kind of Object.keys(write) as (keyof Rows)[]) {
      (write[kind] as unknown[]).push(...part[kind]);
    }
  }
  return write;
}

/**
 * Puts a refused part's rows back into the batches that take their calls' next rows (`batchOf`),
 * each event ahead of its call's later events: written again as they were, where a store that was
 * away may have kept them already (it takes such a write again as written). A call's record is not
 * put back: the live one goes with the call's next change, as it is then.
 */
export function putBack(rows: Rows, batchOf: (key: string) => PendingBatch): void {
  for (const kind of Object.keys(rows) as (keyof Rows)[]) {
    if (kind === 'calls') continue;
    for (const item of rows[kind]) {
      const batch = batchOf(keyOf(kind, item));
      batch.size++;
      if (kind !== 'events') {
        (batch[kind] as unknown[]).push(item);
        continue;
      }
      const event = item as CallEvent;
      const later = batch.events.findIndex(
        (queued) => queued.callId === event.callId && queued.seq > event.seq,
      );
      if (later === -1) batch.events.push(event);
      else batch.events.splice(later, 0, event);
    }
  }
}

/** The kinds of rows a batch lists besides the calls. */
const LISTED: readonly ListedWrite[] = [
  'events',
  'notifications',
  'deliveries',
  'artifacts',
  'steps',
  'resolutions',
  'schedules',
];

/** Takes a call's rows out of a batch not yet sent, all but its record (the live one, written as it will be). */
export function withoutCall(batch: PendingBatch, callId: string): void {
  const listed = batch as Listed;
  for (const kind of LISTED) {
    const rows = listed[kind] as Listed[ListedWrite][number][];
    const kept = rows.filter((item) => keyOf(kind, item) !== callId);
    if (kept.length !== rows.length) (listed as Record<ListedWrite, unknown[]>)[kind] = kept;
  }
}

/** The number of the first of a call's events among some rows, if they hold any. */
export function firstEventOf(rows: Rows, callId: string): number | undefined {
  let first: number | undefined;
  for (const event of rows.events) {
    if (event.callId === callId && (first === undefined || event.seq < first)) first = event.seq;
  }
  return first;
}
