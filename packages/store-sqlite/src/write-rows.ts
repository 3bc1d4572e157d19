import type { Schedule } from '@baton/contracts';
import { eventRowsOf, ROW_EVENTS_MAX, type StoreWrite } from '@baton/store';
import type Database from 'better-sqlite3';

type Value = string | number | null;

/**
 * A write batch as the parameters of its statements: strings and numbers only, each row's JSON
 * made already. That is all a writer thread is sent (cheap to copy between threads), and the JSON
 * is made where the batch is, as it was when the store wrote on the caller's thread.
 */
export interface WriteRows {
  calls: Value[][];
  /** A call's events of one write, as rows of `event_rows` (`call_id`, `seq`, `last_seq`, `events`). */
  events: Value[][];
  notifications: Value[][];
  deliveries: Value[][];
  artifacts: Value[][];
  schedules: Value[][];
  resolutions: Value[][];
  steps: Value[][];
  /** The calls the write makes (see `StoreWrite.newCalls`). */
  newCalls: string[];
}

export function scheduleRow(schedule: Schedule): Value[] {
  const { id, sessionId, enabled, nextAt } = schedule;
  return [id, sessionId, enabled ? 1 : 0, nextAt ?? null, JSON.stringify(schedule)];
}

export function writeRowsOf(batch: StoreWrite): WriteRows {
  return {
    calls: (batch.calls ?? []).map((record) => [
      record.callId,
      record.sessionId,
      record.toolName,
      record.status,
      record.ownerId ?? null,
      record.endedAt ?? null,
      JSON.stringify(record),
    ]),
    events: eventRowsOf(batch.events ?? []).map(({ callId, seq, lastSeq, events }) => [
      callId,
      seq,
      lastSeq,
      JSON.stringify(events),
    ]),
    notifications: (batch.notifications ?? []).map((notification) => [
      notification.id,
      notification.callId,
      notification.sessionId,
      notification.status,
      notification.createdAt,
      notification.acknowledgedAt ?? null,
      JSON.stringify(notification),
    ]),
    deliveries: (batch.deliveries ?? []).map((delivery) => [
      delivery.id,
      delivery.callId,
      delivery.sessionId,
      delivery.status,
      delivery.nextAt,
      JSON.stringify(delivery),
    ]),
    artifacts: (batch.artifacts ?? []).map(({ callId, name, content }) => [callId, name, content]),
    schedules: (batch.schedules ?? []).map(scheduleRow),
    resolutions: (batch.resolutions ?? []).map(({ key, callId, outcome, at }) => [
      key,
      callId,
      JSON.stringify(outcome),
      at,
    ]),
    steps: (batch.steps ?? []).map((step) => [step.callId, step.stepId, JSON.stringify(step.value ?? null)]),
    newCalls: [...(batch.newCalls ?? [])],
  };
}

/** How many rows a batch has, of every kind. */
export function rowsIn({ newCalls: _, ...rows }: WriteRows): number {
  let count = 0;
  for (const kind of Object.values(rows)) count += kind.length;
  return count;
}

export const UPSERT_SCHEDULE = `
  INSERT INTO schedules (id, session_id, enabled, next_at, schedule) VALUES (?, ?, ?, ?, ?)
  ON CONFLICT (id) DO UPDATE SET enabled = excluded.enabled, next_at = excluded.next_at, schedule = excluded.schedule`;

/** The statement of each kind of row but events (see `rowWriter`). */
const STATEMENTS: Record<Exclude<keyof WriteRows, 'events' | 'newCalls'>, string> = {
  calls: `
    INSERT INTO calls (call_id, session_id, tool_name, status, owner_id, ended_at, record)
    VALUES (?, ?, ?, ?, ?, ?, ?)
    ON CONFLICT (call_id) DO UPDATE SET
      status = excluded.status, owner_id = excluded.owner_id, ended_at = excluded.ended_at, record = excluded.record`,
  // One stored already is the same write made again: it stays as it is (acknowledged, perhaps).
  notifications: `
    INSERT INTO notifications (id, call_id, session_id, status, created_at, acknowledged_at, notification)
    VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
  deliveries: `
    INSERT INTO webhook_deliveries (id, call_id, session_id, status, next_at, delivery)
    VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
  artifacts: `
    INSERT INTO artifacts (call_id, name, content) VALUES (?, ?, ?)
    ON CONFLICT (call_id, name) DO UPDATE SET content = excluded.content`,
  schedules: UPSERT_SCHEDULE,
  resolutions:
    'INSERT INTO event_resolutions (key, call_id, outcome, at) VALUES (?, ?, ?, ?) ON CONFLICT (key) DO NOTHING',
  steps: `
    INSERT INTO steps (call_id, step_id, value) VALUES (?, ?, ?)
    ON CONFLICT (call_id, step_id) DO UPDATE SET value = excluded.value`,
};

/**
 * Writes a batch's rows in one transaction, with statements prepared once. Each row of events
 * takes the position `ROW_EVENTS_MAX` after the last row's (see migration step 8): read once a
 * batch, under the write lock.
 */
export function rowWriter(db: Database.Database): (rows: WriteRows) => void {
  const statements = Object.entries(STATEMENTS).map(
    ([kind, sql]) => [kind as keyof typeof STATEMENTS, db.prepare(sql)] as const,
  );
  const lastPosition = db.prepare('SELECT coalesce(max(position), 0) FROM event_rows').pluck();
  const insertEvents = db.prepare(
    'INSERT INTO event_rows (call_id, seq, last_seq, events, position) VALUES (?, ?, ?, ?, ?)',
  );
  const storedAlready = db
    .prepare('SELECT 1 FROM event_rows WHERE call_id = ? AND seq = ? AND last_seq = ? AND events = ?')
    .pluck();
  const storedRecord = db.prepare('SELECT record FROM calls WHERE call_id = ?').pluck();
  const write = db.transaction((rows: WriteRows) => {
    for (const callId of rows.newCalls) {
      // A call this write makes whose id is taken, by another record than this write's own.
      const stored = storedRecord.get(callId);
      const record = rows.calls.findLast((row) => row[0] === callId)?.[6];
      if (stored !== undefined && stored !== record) throw new Error(`call ${callId} exists already`);
    }
    for (const [kind, statement] of statements) {
      for (const row of rows[kind]) statement.run(row);
    }
    if (rows.events.length === 0) return;
    let position = lastPosition.get() as number;
    for (const [callId, seq, lastSeq, events] of rows.events) {
      position += ROW_EVENTS_MAX;
      try {
        insertEvents.run(callId, seq, lastSeq, events, position);
      } catch (error) {
        // A row stored already as it is: the same write made again, kept once. (The statement
        // alone was undone; the transaction goes on.) Other events under its numbers are refused.
        if (storedAlready.get(callId, seq, lastSeq, events) === undefined) throw error;
      }
    }
  });
  // IMMEDIATE: the write lock is taken at BEGIN, so two processes' batches queue on the busy timeout.
  return (rows) => write.immediate(rows);
}
