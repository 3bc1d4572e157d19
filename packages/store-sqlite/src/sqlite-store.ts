import type {
  Artifact,
  CallEvent,
  CallRecord,
  EventOutcome,
  EventResolution,
  Notification,
  RuntimeInstance,
  Schedule,
  StepResult,
} from '@baton/contracts';
import {
  type CallFilter,
  type CallPage,
  type ClaimedCall,
  cursorPosition,
  DEFAULT_PAGE_SIZE,
  type InstanceRow,
  instanceOfRow,
  type NotificationCountFilter,
  type NotificationFilter,
  type SessionEvent,
  type Store,
  type StoreWrite,
  scheduleAfterFiring,
  withStoreErrors,
} from '@baton/store';
import type Database from 'better-sqlite3';
import { integrityProblems, openDatabase } from './opening.js';

export interface SqliteStoreOptions {
  /** The database file (created if missing), or `:memory:`. */
  path: string;
  /**
   * `normal` (default): with WAL, a commit survives the process crashing; `full`: it also survives
   * the machine losing power, at the price of an fsync per commit.
   */
  synchronous?: 'normal' | 'full';
  /** How long a write waits for another process's lock before it fails. Default 5 s. */
  busyTimeoutMs?: number;
  /**
   * Start afresh on purpose where a Baton store used to be. Without it, a store whose file was
   * emptied or deleted (a marker `PATH.baton` beside it remembers it) is refused at open.
   */
  init?: boolean;
  /** `quick` (default): `PRAGMA quick_check` when the file is opened; `none`: skip it. */
  check?: 'quick' | 'none';
}

const UNFINISHED = "status NOT IN ('succeeded', 'failed', 'cancelled', 'timed_out')";

type CallRow = { position: number; record: string; owner_id: string | null };
type NotificationRow = {
  notification: string;
  status: Notification['status'];
  acknowledged_at: number | null;
};

function recordOf(row: CallRow): CallRecord {
  const record = JSON.parse(row.record) as CallRecord;
  if (row.owner_id !== null) record.ownerId = row.owner_id;
  return record;
}

function notificationOf(row: NotificationRow): Notification {
  const notification = JSON.parse(row.notification) as Notification;
  notification.status = row.status;
  if (row.acknowledged_at !== null) notification.acknowledgedAt = row.acknowledged_at;
  return notification;
}

/** `WHERE a AND b` over the conditions that are set, with their parameters in order. */
function whereOf(conditions: ReadonlyArray<readonly [sql: string, ...params: unknown[]] | undefined>): {
  where: string;
  params: unknown[];
} {
  const set = conditions.filter((condition) => condition !== undefined);
  return {
    where: set.length > 0 ? `WHERE ${set.map(([sql]) => sql).join(' AND ')}` : '',
    params: set.flatMap(([, ...params]) => params),
  };
}

/** SQLite's substr counts characters (code points), so the prefix's length is counted the same way. */
function sessionPrefixOf(filter: { sessionPrefix?: string }): readonly [string, number, string] | undefined {
  const prefix = filter.sessionPrefix;
  return prefix === undefined ? undefined : ['substr(session_id, 1, ?) = ?', [...prefix].length, prefix];
}

/** The embedded default store: one SQLite file in WAL mode. Every write batch is one transaction. */
export class SqliteStore implements Store {
  readonly #db: Database.Database;
  readonly #upsertCall: Database.Statement;
  readonly #insertEvent: Database.Statement;
  readonly #insertNotification: Database.Statement;
  readonly #upsertArtifact: Database.Statement;
  readonly #upsertStep: Database.Statement;
  readonly #insertResolution: Database.Statement;
  readonly #upsertSchedule: Database.Statement;
  readonly #writeBatch: (batch: StoreWrite) => void;

  constructor(options: SqliteStoreOptions) {
    this.#db = openDatabase(options);
    this.#upsertCall = this.#db.prepare(`
      INSERT INTO calls (call_id, session_id, tool_name, status, owner_id, ended_at, record)
      VALUES (@callId, @sessionId, @toolName, @status, @ownerId, @endedAt, @record)
      ON CONFLICT (call_id) DO UPDATE SET
        status = excluded.status, owner_id = excluded.owner_id, ended_at = excluded.ended_at, record = excluded.record`);
    this.#insertEvent = this.#db.prepare('INSERT INTO events (call_id, seq, event) VALUES (?, ?, ?)');
    this.#insertNotification = this.#db.prepare(`
      INSERT INTO notifications (id, call_id, session_id, status, created_at, acknowledged_at, notification)
      VALUES (@id, @callId, @sessionId, @status, @createdAt, @acknowledgedAt, @notification)`);
    this.#upsertArtifact = this.#db.prepare(`
      INSERT INTO artifacts (call_id, name, content) VALUES (@callId, @name, @content)
      ON CONFLICT (call_id, name) DO UPDATE SET content = excluded.content`);
    this.#upsertStep = this.#db.prepare(`
      INSERT INTO steps (call_id, step_id, value) VALUES (?, ?, ?)
      ON CONFLICT (call_id, step_id) DO UPDATE SET value = excluded.value`);
    this.#insertResolution = this.#db.prepare(
      'INSERT INTO event_resolutions (key, call_id, outcome, at) VALUES (?, ?, ?, ?) ON CONFLICT (key) DO NOTHING',
    );
    this.#upsertSchedule = this.#db.prepare(`
      INSERT INTO schedules (id, session_id, enabled, next_at, schedule) VALUES (?, ?, ?, ?, ?)
      ON CONFLICT (id) DO UPDATE SET enabled = excluded.enabled, next_at = excluded.next_at, schedule = excluded.schedule`);
    this.#writeBatch = this.#db.transaction((batch: StoreWrite) => {
      for (const record of batch.calls ?? []) {
        this.#upsertCall.run({
          callId: record.callId,
          sessionId: record.sessionId,
          toolName: record.toolName,
          status: record.status,
          ownerId: record.ownerId ?? null,
          endedAt: record.endedAt ?? null,
          record: JSON.stringify(record),
        });
      }
      for (const event of batch.events ?? [])
        this.#insertEvent.run(event.callId, event.seq, JSON.stringify(event));
      for (const notification of batch.notifications ?? []) {
        this.#insertNotification.run({
          id: notification.id,
          callId: notification.callId,
          sessionId: notification.sessionId,
          status: notification.status,
          createdAt: notification.createdAt,
          acknowledgedAt: notification.acknowledgedAt ?? null,
          notification: JSON.stringify(notification),
        });
      }
      for (const artifact of batch.artifacts ?? []) this.#upsertArtifact.run(artifact satisfies Artifact);
      for (const schedule of batch.schedules ?? []) {
        const { id, sessionId, enabled, nextAt } = schedule;
        this.#upsertSchedule.run(id, sessionId, enabled ? 1 : 0, nextAt ?? null, JSON.stringify(schedule));
      }
      for (const resolution of batch.resolutions ?? []) {
        const { key, callId, outcome, at } = resolution;
        this.#insertResolution.run(key, callId, JSON.stringify(outcome), at);
      }
      for (const step of batch.steps ?? []) {
        this.#upsertStep.run(step.callId, step.stepId, JSON.stringify(step.value ?? null));
      }
    });
  }

  async write(batch: StoreWrite): Promise<void> {
    this.#writeBatch(batch);
  }

  async getCall(callId: string): Promise<CallRecord | undefined> {
    const row = this.#db
      .prepare('SELECT position, record, owner_id FROM calls WHERE call_id = ?')
      .get(callId) as CallRow | undefined;
    return row && recordOf(row);
  }

  async getCalls(callIds: readonly string[]): Promise<CallRecord[]> {
    if (callIds.length === 0) return [];
    const rows = this.#db
      .prepare(
        'SELECT position, record, owner_id FROM calls WHERE call_id IN (SELECT DISTINCT value FROM json_each(?))',
      )
      .all(JSON.stringify(callIds)) as CallRow[];
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
    const rows = this.#db.prepare(sql).all(...params, limit + 1) as CallRow[];
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    return {
      calls: page.map(recordOf),
      ...(rows.length > limit && last ? { nextCursor: String(last.position) } : {}),
    };
  }

  async listEvents(callId: string, fromSeq = 0, limit = -1): Promise<CallEvent[]> {
    // LIMIT -1 is SQLite's "no limit".
    const rows = this.#db
      .prepare('SELECT event FROM events WHERE call_id = ? AND seq >= ? ORDER BY seq LIMIT ?')
      .all(callId, fromSeq, limit) as Array<{ event: string }>;
    return rows.map((row) => JSON.parse(row.event) as CallEvent);
  }

  async listSessionEvents(sessionId: string, afterPosition = 0, limit = -1): Promise<SessionEvent[]> {
    const rows = this.#db
      .prepare(`
        SELECT e.position, e.event FROM calls c JOIN events e ON e.call_id = c.call_id
        WHERE c.session_id = ? AND e.position > ? ORDER BY e.position LIMIT ?`)
      .all(sessionId, afterPosition, limit) as Array<{ position: number; event: string }>;
    return rows.map((row) => ({ position: row.position, event: JSON.parse(row.event) as CallEvent }));
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
    return (this.#db.prepare(sql).all(...params) as NotificationRow[]).map(notificationOf);
  }

  async countNotifications(filter: NotificationCountFilter = {}): Promise<number> {
    const { where, params } = whereOf([
      filter.sessionId === undefined ? undefined : ['session_id = ?', filter.sessionId],
      sessionPrefixOf(filter),
      filter.status === undefined ? undefined : ['status = ?', filter.status],
    ]);
    const row = this.#db.prepare(`SELECT COUNT(*) AS count FROM notifications ${where}`).get(...params) as {
      count: number;
    };
    return row.count;
  }

  async acknowledgeNotification(id: string, at: number): Promise<boolean> {
    const result = this.#db
      .prepare(
        "UPDATE notifications SET status = 'acknowledged', acknowledged_at = ? WHERE id = ? AND status = 'queued'",
      )
      .run(at, id);
    return result.changes === 1;
  }

  async getArtifact(callId: string, name: string): Promise<string | undefined> {
    const row = this.#db
      .prepare('SELECT content FROM artifacts WHERE call_id = ? AND name = ?')
      .get(callId, name) as { content: string } | undefined;
    return row?.content;
  }

  async listArtifacts(callId: string): Promise<string[]> {
    const rows = this.#db
      .prepare('SELECT name FROM artifacts WHERE call_id = ? ORDER BY name')
      .all(callId) as Array<{
      name: string;
    }>;
    return rows.map((row) => row.name);
  }

  async listSteps(callId: string): Promise<StepResult[]> {
    const rows = this.#db.prepare('SELECT step_id, value FROM steps WHERE call_id = ?').all(callId) as Array<{
      step_id: string;
      value: string;
    }>;
    return rows.map((row) => ({ callId, stepId: row.step_id, value: JSON.parse(row.value) as unknown }));
  }

  async getResolution(key: string): Promise<EventResolution | undefined> {
    const row = this.#db
      .prepare('SELECT key, call_id, outcome, at FROM event_resolutions WHERE key = ?')
      .get(key) as { key: string; call_id: string; outcome: string; at: number } | undefined;
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
    return (this.#db.prepare(sql).all(...params) as Array<{ schedule: string }>).map(
      (row) => JSON.parse(row.schedule) as Schedule,
    );
  }

  async claimFiring(
    scheduleId: string,
    dueAt: number,
    next: { nextAt?: number; enabled: boolean },
  ): Promise<boolean> {
    return this.#db
      .transaction(() => {
        const row = this.#db
          .prepare('SELECT schedule FROM schedules WHERE id = ? AND enabled = 1 AND next_at = ?')
          .get(scheduleId, dueAt) as { schedule: string } | undefined;
        if (!row) return false;
        const claimed = scheduleAfterFiring(JSON.parse(row.schedule) as Schedule, next);
        this.#upsertSchedule.run(
          scheduleId,
          claimed.sessionId,
          claimed.enabled ? 1 : 0,
          claimed.nextAt ?? null,
          JSON.stringify(claimed),
        );
        return true;
      })
      .immediate();
  }

  async deleteEndedBefore(time: number, limit = -1): Promise<number> {
    return this.#db
      .transaction(() => {
        // The same calls for every statement: the transaction holds the write lock throughout.
        const ended = 'SELECT call_id FROM calls WHERE ended_at < ? ORDER BY ended_at LIMIT ?';
        for (const table of ['events', 'artifacts', 'steps', 'event_resolutions']) {
          this.#db.prepare(`DELETE FROM ${table} WHERE call_id IN (${ended})`).run(time, limit);
        }
        this.#db
          .prepare(`DELETE FROM notifications WHERE status = 'acknowledged' AND call_id IN (${ended})`)
          .run(time, limit);
        const { changes } = this.#db
          .prepare(`DELETE FROM calls WHERE call_id IN (${ended})`)
          .run(time, limit);
        // The last batch also takes the notifications acknowledged after their call was removed.
        if (limit < 0 || changes < limit) {
          this.#db
            .prepare(
              "DELETE FROM notifications WHERE status = 'acknowledged' AND call_id NOT IN (SELECT call_id FROM calls)",
            )
            .run();
        }
        return changes;
      })
      .immediate();
  }

  async registerInstance(instance: RuntimeInstance): Promise<void> {
    this.#db
      .prepare(`
        INSERT INTO instances (id, host, pid, boot, started_at, heartbeat_at, lease_ms)
        VALUES (@id, @host, @pid, @boot, @startedAt, @heartbeatAt, @leaseMs)
        ON CONFLICT (id) DO UPDATE SET heartbeat_at = excluded.heartbeat_at, lease_ms = excluded.lease_ms`)
      .run(instance);
  }

  async heartbeat(instanceId: string, at: number): Promise<boolean> {
    return (
      this.#db.prepare('UPDATE instances SET heartbeat_at = ? WHERE id = ?').run(at, instanceId).changes === 1
    );
  }

  async listInstances(): Promise<RuntimeInstance[]> {
    return (this.#db.prepare('SELECT * FROM instances').all() as InstanceRow[]).map(instanceOfRow);
  }

  async removeInstance(instanceId: string): Promise<void> {
    this.#db.prepare('DELETE FROM instances WHERE id = ?').run(instanceId);
  }

  async claimCalls(goneInstanceIds: readonly string[], ownerId: string): Promise<CallRecord[]> {
    if (goneInstanceIds.length === 0) return [];
    const ids = goneInstanceIds.map(() => '?').join(', ');
    return this.#db
      .transaction(() => {
        const rows = this.#db
          .prepare(
            `UPDATE calls SET owner_id = ? WHERE owner_id IN (${ids}) AND ended_at IS NULL AND ${UNFINISHED}
           RETURNING position, record, owner_id`,
          )
          .all(ownerId, ...goneInstanceIds) as CallRow[];
        this.#db.prepare(`DELETE FROM instances WHERE id IN (${ids})`).run(...goneInstanceIds);
        return rows.map(recordOf);
      })
      .immediate();
  }

  async claimQueued(ownerId: string, limit: number, callId?: string): Promise<ClaimedCall[]> {
    const only =
      callId === undefined ? "AND json_extract(record, '$.approval') IS NOT 'pending'" : 'AND call_id = ?';
    const rows = this.#db
      .prepare(
        `UPDATE calls SET owner_id = ? WHERE position IN (
           SELECT position FROM calls WHERE owner_id IS NULL AND status = 'queued' ${only}
           ORDER BY position LIMIT ?)
         RETURNING position, record, owner_id,
           (SELECT coalesce(max(seq), 0) FROM events WHERE events.call_id = calls.call_id) AS last_seq`,
      )
      .all(ownerId, ...(callId === undefined ? [] : [callId]), limit) as Array<
      CallRow & { last_seq: number }
    >;
    return rows
      .sort((a, b) => a.position - b.position)
      .map((row) => ({ record: recordOf(row), lastSeq: row.last_seq }));
  }

  /** `PRAGMA integrity_check` over the whole file (slow on a large one): each problem found, none when sound. */
  async integrityCheck(): Promise<string[]> {
    return integrityProblems(this.#db);
  }

  async close(): Promise<void> {
    if (this.#db.open) this.#db.close();
  }
}

export function sqliteStore(options: SqliteStoreOptions): Store {
  return withStoreErrors(new SqliteStore(options));
}
