import type { CallRecord, Notification, RuntimeInstance, Schedule, WebhookDelivery } from '@baton/contracts';
import { type ClaimedCall, type NotificationHold, scheduleAfterFiring } from '@baton/store';
import type Database from 'better-sqlite3';
import { type CallRow, type NotificationRow, notificationOf, recordOf, UNFINISHED } from './records.js';
import { rowWriter, scheduleRow, UPSERT_SCHEDULE, type WriteRows } from './write-rows.js';

/**
 * Everything a SQLite store changes, on one connection: the rows of a batch, and each other change
 * of the store. It runs on the store's writer thread (or, for `:memory:`, on the caller's), one
 * change after another. Each method returns what the store's method resolves to.
 */
export class SqliteWriter {
  readonly #db: Database.Database;
  readonly #writeRows: (rows: WriteRows) => void;

  constructor(db: Database.Database) {
    this.#db = db;
    this.#writeRows = rowWriter(db);
  }

  write(rows: WriteRows): void {
    this.#writeRows(rows);
  }

  acknowledgeNotification(id: string, at: number): boolean {
    const result = this.#db
      .prepare(
        "UPDATE notifications SET status = 'acknowledged', acknowledged_at = ? WHERE id = ? AND status = 'queued'",
      )
      .run(at, id);
    return result.changes === 1;
  }

  holdNotifications({ sessionId, schedulings, holder }: NotificationHold): Notification[] {
    const rows = this.#db
      .prepare(
        `UPDATE notifications SET held_by = ? WHERE rowid IN (
           SELECT rowid FROM notifications
           WHERE session_id = ? AND status = 'queued'
             AND json_extract(notification, '$.scheduling') IN (SELECT value FROM json_each(?))
             AND (held_by IS NULL OR held_by NOT IN (SELECT id FROM instances)))
         RETURNING rowid, created_at, notification, status, acknowledged_at`,
      )
      .all(holder, sessionId, JSON.stringify(schedulings)) as Array<
      NotificationRow & { rowid: number; created_at: number }
    >;
    rows.sort((a, b) => a.created_at - b.created_at || a.rowid - b.rowid);
    return rows.map(notificationOf);
  }

  releaseNotifications(ids: readonly string[], holder: string): void {
    this.#db
      .prepare(
        `UPDATE notifications SET held_by = NULL
         WHERE held_by = ? AND id IN (SELECT value FROM json_each(?))`,
      )
      .run(holder, JSON.stringify(ids));
  }

  claimDeliveries(ownerId: string, now: number, leaseMs: number, limit: number): WebhookDelivery[] {
    const rows = this.#db
      .prepare(
        `UPDATE webhook_deliveries SET owner_id = ?, lease_until = ? WHERE position IN (
           SELECT position FROM webhook_deliveries
           WHERE status = 'pending' AND next_at <= ? AND (lease_until IS NULL OR lease_until <= ?)
           ORDER BY next_at, position LIMIT ?)
         RETURNING next_at, position, delivery`,
      )
      .all(ownerId, now + leaseMs, now, now, limit) as Array<{
      next_at: number;
      position: number;
      delivery: string;
    }>;
    return rows
      .sort((a, b) => a.next_at - b.next_at || a.position - b.position)
      .map((row) => JSON.parse(row.delivery) as WebhookDelivery);
  }

  settleDelivery(delivery: WebhookDelivery, ownerId: string): boolean {
    const { changes } = this.#db
      .prepare(
        `UPDATE webhook_deliveries SET status = ?, next_at = ?, owner_id = NULL, lease_until = NULL, delivery = ?
         WHERE id = ? AND owner_id = ? AND lease_until IS NOT NULL`,
      )
      .run(delivery.status, delivery.nextAt, JSON.stringify(delivery), delivery.id, ownerId);
    return changes === 1;
  }

  claimFiring(scheduleId: string, dueAt: number, next: { nextAt?: number; enabled: boolean }): boolean {
    return this.#db
      .transaction(() => {
        const row = this.#db
          .prepare('SELECT schedule FROM schedules WHERE id = ? AND enabled = 1 AND next_at = ?')
          .get(scheduleId, dueAt) as { schedule: string } | undefined;
        if (!row) return false;
        const claimed = scheduleAfterFiring(JSON.parse(row.schedule) as Schedule, next);
        this.#db.prepare(UPSERT_SCHEDULE).run(scheduleRow(claimed));
        return true;
      })
      .immediate();
  }

  deleteEndedBefore(time: number, limit = -1): number {
    return this.#db
      .transaction(() => {
        // The same calls for every statement: the transaction holds the write lock throughout.
        const ended = 'SELECT call_id FROM calls WHERE ended_at < ? ORDER BY ended_at LIMIT ?';
        for (const table of ['event_rows', 'artifacts', 'steps', 'event_resolutions']) {
          this.#db.prepare(`DELETE FROM ${table} WHERE call_id IN (${ended})`).run(time, limit);
        }
        this.#db
          .prepare(`DELETE FROM notifications WHERE status = 'acknowledged' AND call_id IN (${ended})`)
          .run(time, limit);
        this.#db
          .prepare(`DELETE FROM webhook_deliveries WHERE status <> 'pending' AND call_id IN (${ended})`)
          .run(time, limit);
        const { changes } = this.#db
          .prepare(`DELETE FROM calls WHERE call_id IN (${ended})`)
          .run(time, limit);
        // The last batch also takes the notifications acknowledged, and the deliveries settled,
        // after their call was removed.
        if (limit < 0 || changes < limit) {
          this.#db
            .prepare(
              "DELETE FROM notifications WHERE status = 'acknowledged' AND call_id NOT IN (SELECT call_id FROM calls)",
            )
            .run();
          this.#db
            .prepare(
              "DELETE FROM webhook_deliveries WHERE status <> 'pending' AND call_id NOT IN (SELECT call_id FROM calls)",
            )
            .run();
        }
        return changes;
      })
      .immediate();
  }

  registerInstance(instance: RuntimeInstance): void {
    this.#db
      .prepare(`
        INSERT INTO instances (id, host, pid, boot, started_at, heartbeat_at, lease_ms, protocol)
        VALUES (@id, @host, @pid, @boot, @startedAt, @heartbeatAt, @leaseMs, @protocol)
        ON CONFLICT (id) DO UPDATE SET heartbeat_at = excluded.heartbeat_at, lease_ms = excluded.lease_ms`)
      .run(instance);
  }

  heartbeat(instanceId: string, at: number): boolean {
    return (
      this.#db.prepare('UPDATE instances SET heartbeat_at = ? WHERE id = ?').run(at, instanceId).changes === 1
    );
  }

  removeInstance(instanceId: string): void {
    this.#db.prepare('DELETE FROM instances WHERE id = ?').run(instanceId);
  }

  claimCalls(goneInstanceIds: readonly string[], ownerId: string): CallRecord[] {
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

  claimQueued(ownerId: string, limit: number, callId?: string): ClaimedCall[] {
    const only =
      callId === undefined ? "AND json_extract(record, '$.approval') IS NOT 'pending'" : 'AND call_id = ?';
    const rows = this.#db
      .prepare(
        `UPDATE calls SET owner_id = ? WHERE position IN (
           SELECT position FROM calls WHERE owner_id IS NULL AND status = 'queued' ${only}
           ORDER BY position LIMIT ?)
         RETURNING position, record, owner_id,
           coalesce((SELECT last_seq FROM event_rows WHERE event_rows.call_id = calls.call_id
                     ORDER BY seq DESC LIMIT 1), 0) AS last_seq`,
      )
      .all(ownerId, ...(callId === undefined ? [] : [callId]), limit) as Array<
      CallRow & { last_seq: number }
    >;
    return rows
      .sort((a, b) => a.position - b.position)
      .map((row) => ({ record: recordOf(row), lastSeq: row.last_seq }));
  }

  close(): void {
    if (this.#db.open) this.#db.close();
  }
}

/** The writer's changes, by name: what the store sends to its writer thread. */
export type WriterMethod = Exclude<keyof SqliteWriter, 'close'>;
