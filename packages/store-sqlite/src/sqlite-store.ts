import type {
  CallEvent,
  CallRecord,
  EventOutcome,
  EventResolution,
  Notification,
  RuntimeInstance,
  Schedule,
  StepResult,
  WebhookDelivery,
} from '@baton/contracts';
import {
  type CallFilter,
  type CallPage,
  type ClaimedCall,
  cursorPosition,
  DEFAULT_PAGE_SIZE,
  type DeliveryCountFilter,
  type DeliveryFilter,
  type InstanceRow,
  instanceOfRow,
  type NotificationCountFilter,
  type NotificationFilter,
  type NotificationHold,
  type QueueDepth,
  ROW_EVENTS_MAX,
  type SessionEvent,
  type Store,
  type StoreWrite,
  withStoreErrors,
} from '@baton/store';
import type Database from 'better-sqlite3';
import { integrityProblems, openDatabase } from './opening.js';
import { QUEUE_DEPTH, queueDepthOf } from './queue-depth.js';
import { type CallRow, type NotificationRow, notificationOf, recordOf } from './records.js';
import { SqliteWriter, type WriterMethod } from './sqlite-writer.js';
import type { SqliteStoreOptions } from './store-options.js';
import { deliveryConditions, sessionPrefixOf, whereOf } from './where.js';
import { rowsIn, writeRowsOf } from './write-rows.js';
import { WriterThread, writerThreadAvailable } from './writer-thread.js';

export type { SqliteStoreOptions } from './store-options.js';

/** Batches out at once to the writer thread, and calls in a batch at most (`Store.writeBatchCalls`). */
const WRITE_CONCURRENCY = 2;
const WRITE_BATCH_CALLS = 250;
/**
 * A batch of at most this many rows (128 calls' that ran in one tick: a record and a row of events
 * each) is written here when the thread is idle.
 * With few calls in flight, a batch holds most of them: nothing would run while the thread
 * committed it, and the hop there and back would only add to their wait (64 in flight were 15%
 * slower with every batch of more than a lone call's rows sent to the thread).
 */
const SMALL_WRITE_ROWS = 256;

/** The embedded default store: one SQLite file in WAL mode. Every write batch is one transaction. */
export class SqliteStore implements Store {
  /** The caller's connection: every read is made on it, at once, and the changes made here. */
  readonly #db: Database.Database;
  /** The changes made on the caller's thread, on `#db`. */
  readonly #here: SqliteWriter;
  /** The store's writer thread, unless `:memory:` or `writerThread: false`. */
  readonly #thread: WriterThread | undefined;
  readonly writeConcurrency: number | undefined;
  readonly writeBatchCalls: number | undefined;
  readonly outlivesProcess: boolean;

  /**
   * What may pass while the runtime waits, so that the same write may work shortly: a lock another
   * process held past the busy timeout, a full disk (`SQLITE_FULL`, or the I/O error a write that
   * finds no room raises), which someone may free. SQLite undoes the whole transaction first.
   */
  isUnavailable(error: unknown): boolean {
    for (let cause = error, depth = 0; cause !== undefined && cause !== null && depth < 5; depth++) {
      const code = (cause as { code?: unknown }).code;
      if (typeof code === 'string' && /^SQLITE_(BUSY|LOCKED|FULL|IOERR)/.test(code)) return true;
      cause = (cause as { cause?: unknown }).cause;
    }
    return false;
  }
  /** Each read's statement, prepared once: the SQL of a read is one of a few, by its filter's shape. */
  readonly #statements = new Map<string, Database.Statement>();

  constructor(options: SqliteStoreOptions) {
    this.#db = openDatabase(options);
    this.#here = new SqliteWriter(this.#db);
    const onDisk = options.path !== ':memory:' && options.path !== '';
    this.outlivesProcess = onDisk;
    if (onDisk && (options.writerThread ?? true) && writerThreadAvailable()) {
      this.#thread = new WriterThread({
        path: options.path,
        ...(options.synchronous === undefined ? {} : { synchronous: options.synchronous }),
        ...(options.busyTimeoutMs === undefined ? {} : { busyTimeoutMs: options.busyTimeoutMs }),
      });
      // Batches a quarter of the calls in flight, two out at once: the runtime runs the calls of
      // one while the thread commits the other.
      this.writeConcurrency = WRITE_CONCURRENCY;
      this.writeBatchCalls = WRITE_BATCH_CALLS;
    } else {
      this.#thread = undefined;
      this.writeConcurrency = undefined;
      this.writeBatchCalls = undefined;
    }
  }

  #statement(sql: string): Database.Statement {
    let statement = this.#statements.get(sql);
    if (!statement) {
      statement = this.#db.prepare(sql);
      this.#statements.set(sql, statement);
    }
    return statement;
  }

  /**
   * A change, in the order asked for: made here when it is small and the thread has nothing out
   * (a hop to the thread and back costs more than a lone call's commit), else sent to the thread,
   * behind what is out there.
   */
  #change<M extends WriterMethod>(
    method: M,
    small: boolean,
    ...args: Parameters<SqliteWriter[M]>
  ): Promise<ReturnType<SqliteWriter[M]>> {
    if (this.#thread && !(small && this.#thread.idle)) return this.#thread.request(method, args);
    try {
      const change = this.#here[method] as (...given: unknown[]) => ReturnType<SqliteWriter[M]>;
      return Promise.resolve(change.apply(this.#here, args));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  async write(batch: StoreWrite): Promise<void> {
    const rows = writeRowsOf(batch);
    return this.#change('write', rowsIn(rows) <= SMALL_WRITE_ROWS, rows);
  }

  async getCall(callId: string): Promise<CallRecord | undefined> {
    const row = this.#statement('SELECT position, record, owner_id FROM calls WHERE call_id = ?').get(
      callId,
    ) as CallRow | undefined;
    return row && recordOf(row);
  }

  async getCalls(callIds: readonly string[]): Promise<CallRecord[]> {
    if (callIds.length === 0) return [];
    const rows = this.#statement(
      'SELECT position, record, owner_id FROM calls WHERE call_id IN (SELECT DISTINCT value FROM json_each(?))',
    ).all(JSON.stringify(callIds)) as CallRow[];
    return rows.map(recordOf);
  }

  async listCalls(filter: CallFilter = {}): Promise<CallPage> {
    const limit = filter.limit ?? DEFAULT_PAGE_SIZE;
    const statuses = typeof filter.status === 'string' ? [filter.status] : filter.status;
    const { where, params } = whereOf([
      filter.cursor === undefined ? undefined : ['position < ?', cursorPosition(filter.cursor)],
      filter.sessionId === undefined ? undefined : ['session_id = ?', filter.sessionId],
      sessionPrefixOf(filter),
      filter.toolName === undefined ? undefined : ['tool_name = ?', filter.toolName],
      statuses === undefined ? undefined : [`status IN (${statuses.map(() => '?').join(', ')})`, ...statuses],
    ]);
    const sql = `SELECT position, record, owner_id FROM calls ${where} ORDER BY position DESC LIMIT ?`;
    const rows = this.#statement(sql).all(...params, limit + 1) as CallRow[];
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    return {
      calls: page.map(recordOf),
      ...(rows.length > limit && last ? { nextCursor: String(last.position) } : {}),
    };
  }

  async listEvents(callId: string, fromSeq = 0, limit = -1): Promise<CallEvent[]> {
    // LIMIT -1 is SQLite's "no limit". Each row has one event from fromSeq on, at least.
    const rows = this.#statement(
      'SELECT seq, events FROM event_rows WHERE call_id = ? AND last_seq >= ? ORDER BY seq LIMIT ?',
    ).all(callId, fromSeq, limit) as Array<{ seq: number; events: string }>;
    const events: CallEvent[] = [];
    for (const row of rows) {
      for (const event of JSON.parse(row.events) as CallEvent[]) {
        if (event.seq >= fromSeq && events.length !== limit) events.push(event);
      }
    }
    return events;
  }

  async listSessionEvents(sessionId: string, afterPosition = 0, limit = -1): Promise<SessionEvent[]> {
    // The row that holds the position may hold events after it (a page may end inside a row):
    // rows take positions ROW_EVENTS_MAX apart, so it starts less than that before. Then as many
    // rows as events asked for, each holding one at least.
    const rows = this.#statement(`
        SELECT r.position, r.events FROM calls c JOIN event_rows r ON r.call_id = c.call_id
        WHERE c.session_id = ? AND r.position > ? AND r.position + (r.last_seq - r.seq) > ?
        ORDER BY r.position LIMIT ?`).all(
      sessionId,
      afterPosition - ROW_EVENTS_MAX,
      afterPosition,
      limit,
    ) as Array<{
      position: number;
      events: string;
    }>;
    const events: SessionEvent[] = [];
    for (const row of rows) {
      for (const [index, event] of (JSON.parse(row.events) as CallEvent[]).entries()) {
        const position = row.position + index;
        if (position > afterPosition && events.length !== limit) events.push({ position, event });
      }
    }
    return events;
  }

  async listNotifications(filter: NotificationFilter = {}): Promise<Notification[]> {
    const { where, params } = whereOf([
      filter.sessionId === undefined ? undefined : ['session_id = ?', filter.sessionId],
      sessionPrefixOf(filter),
      filter.status === undefined ? undefined : ['status = ?', filter.status],
      filter.id === undefined ? undefined : ['id = ?', filter.id],
      filter.after === undefined
        ? undefined
        : ['(created_at, rowid) > (SELECT created_at, rowid FROM notifications WHERE id = ?)', filter.after],
    ]);
    const limit = filter.limit === undefined ? '' : ` LIMIT ${Math.max(0, Math.floor(filter.limit))}`;
    const sql = `SELECT notification, status, acknowledged_at FROM notifications ${where} ORDER BY created_at, rowid${limit}`;
    return (this.#statement(sql).all(...params) as NotificationRow[]).map(notificationOf);
  }

  async countNotifications(filter: NotificationCountFilter = {}): Promise<number> {
    const { where, params } = whereOf([
      filter.sessionId === undefined ? undefined : ['session_id = ?', filter.sessionId],
      sessionPrefixOf(filter),
      filter.status === undefined ? undefined : ['status = ?', filter.status],
    ]);
    const row = this.#statement(`SELECT COUNT(*) AS count FROM notifications ${where}`).get(...params) as {
      count: number;
    };
    return row.count;
  }

  async acknowledgeNotification(id: string, at: number): Promise<boolean> {
    return this.#change('acknowledgeNotification', true, id, at);
  }

  async holdNotifications(hold: NotificationHold): Promise<Notification[]> {
    return this.#change('holdNotifications', true, hold);
  }

  async releaseNotifications(ids: readonly string[], holder: string): Promise<void> {
    return this.#change('releaseNotifications', true, ids, holder);
  }

  async claimDeliveries(
    ownerId: string,
    now: number,
    leaseMs: number,
    limit: number,
  ): Promise<WebhookDelivery[]> {
    return this.#change('claimDeliveries', true, ownerId, now, leaseMs, limit);
  }

  async settleDelivery(delivery: WebhookDelivery, ownerId: string): Promise<boolean> {
    return this.#change('settleDelivery', true, delivery, ownerId);
  }

  async listDeliveries(filter: DeliveryFilter = {}): Promise<WebhookDelivery[]> {
    const { where, params } = deliveryConditions(filter);
    const rows = this.#statement(
      `SELECT delivery FROM webhook_deliveries ${where} ORDER BY position DESC LIMIT ?`,
    ).all(...params, filter.limit ?? DEFAULT_PAGE_SIZE) as Array<{ delivery: string }>;
    return rows.map((row) => JSON.parse(row.delivery) as WebhookDelivery);
  }

  async countDeliveries(filter: DeliveryCountFilter = {}): Promise<number> {
    const { where, params } = deliveryConditions(filter);
    const row = this.#statement(`SELECT COUNT(*) AS count FROM webhook_deliveries ${where}`).get(
      ...params,
    ) as {
      count: number;
    };
    return row.count;
  }

  async getArtifact(callId: string, name: string): Promise<string | undefined> {
    const row = this.#statement('SELECT content FROM artifacts WHERE call_id = ? AND name = ?').get(
      callId,
      name,
    ) as { content: string } | undefined;
    return row?.content;
  }

  async listArtifacts(callId: string): Promise<string[]> {
    const rows = this.#statement('SELECT name FROM artifacts WHERE call_id = ? ORDER BY name').all(
      callId,
    ) as Array<{
      name: string;
    }>;
    return rows.map((row) => row.name);
  }

  async listSteps(callId: string): Promise<StepResult[]> {
    const rows = this.#statement('SELECT step_id, value FROM steps WHERE call_id = ?').all(callId) as Array<{
      step_id: string;
      value: string;
    }>;
    return rows.map((row) => ({ callId, stepId: row.step_id, value: JSON.parse(row.value) as unknown }));
  }

  async getResolution(key: string): Promise<EventResolution | undefined> {
    const row = this.#statement('SELECT key, call_id, outcome, at FROM event_resolutions WHERE key = ?').get(
      key,
    ) as { key: string; call_id: string; outcome: string; at: number } | undefined;
    return (
      row && {
        key: row.key,
        callId: row.call_id,
        outcome: JSON.parse(row.outcome) as EventOutcome,
        at: row.at,
      }
    );
  }

  async listSchedules(filter: { sessionId?: string; enabled?: boolean } = {}): Promise<Schedule[]> {
    const { where, params } = whereOf([
      filter.sessionId === undefined ? undefined : ['session_id = ?', filter.sessionId],
      filter.enabled === undefined ? undefined : ['enabled = ?', filter.enabled ? 1 : 0],
    ]);
    const sql = `SELECT schedule FROM schedules ${where} ORDER BY rowid`;
    return (this.#statement(sql).all(...params) as Array<{ schedule: string }>).map(
      (row) => JSON.parse(row.schedule) as Schedule,
    );
  }

  async claimFiring(
    scheduleId: string,
    dueAt: number,
    next: { nextAt?: number; enabled: boolean },
  ): Promise<boolean> {
    return this.#change('claimFiring', true, scheduleId, dueAt, next);
  }

  async deleteEndedBefore(time: number, limit?: number): Promise<number> {
    return this.#change('deleteEndedBefore', false, time, limit);
  }

  async registerInstance(instance: RuntimeInstance): Promise<void> {
    return this.#change('registerInstance', true, instance);
  }

  async heartbeat(instanceId: string, at: number): Promise<boolean> {
    return this.#change('heartbeat', true, instanceId, at);
  }

  async queueDepth(): Promise<QueueDepth> {
    return queueDepthOf(this.#statement(QUEUE_DEPTH).get() as Parameters<typeof queueDepthOf>[0]);
  }

  async listInstances(): Promise<RuntimeInstance[]> {
    return (this.#statement('SELECT * FROM instances').all() as InstanceRow[]).map(instanceOfRow);
  }

  async removeInstance(instanceId: string): Promise<void> {
    return this.#change('removeInstance', true, instanceId);
  }

  async claimCalls(goneInstanceIds: readonly string[], ownerId: string): Promise<CallRecord[]> {
    return this.#change('claimCalls', false, goneInstanceIds, ownerId);
  }

  async claimQueued(ownerId: string, limit: number, callId?: string): Promise<ClaimedCall[]> {
    return this.#change('claimQueued', false, ownerId, limit, callId);
  }

  async heldBy(ownerId: string): Promise<ClaimedCall[]> {
    const rows = this.#statement(
      `SELECT position, record, owner_id,
         coalesce((SELECT last_seq FROM event_rows WHERE event_rows.call_id = calls.call_id
                   ORDER BY seq DESC LIMIT 1), 0) AS last_seq
       FROM calls WHERE owner_id = ? AND ended_at IS NULL
         AND status NOT IN ('succeeded', 'failed', 'cancelled', 'timed_out')
       ORDER BY position`,
    ).all(ownerId) as Array<CallRow & { last_seq: number }>;
    return rows.map((row) => ({ record: recordOf(row), lastSeq: row.last_seq }));
  }

  /** `PRAGMA integrity_check` over the whole file (slow on a large one): each problem found, none when sound. */
  async integrityCheck(): Promise<string[]> {
    return integrityProblems(this.#db);
  }

  /** Settles once every change asked for before is made, and both connections are closed. */
  async close(): Promise<void> {
    await this.#thread?.close();
    if (this.#db.open) this.#db.close();
  }
}

export function sqliteStore(options: SqliteStoreOptions): Store {
  return withStoreErrors(new SqliteStore(options));
}
