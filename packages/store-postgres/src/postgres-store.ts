import type {
  CallEvent,
  CallRecord,
  EventResolution,
  Notification,
  RuntimeInstance,
  Schedule,
  StepResult,
  WebhookDelivery,
} from '@baton/contracts';
import { BatonError } from '@baton/contracts';
import {
  type CallControl,
  type CallFilter,
  type CallPage,
  type ClaimedCall,
  type DeliveryCountFilter,
  type DeliveryFilter,
  type NoticeTopic,
  type NotificationCountFilter,
  type NotificationFilter,
  type NotificationHold,
  type QueueDepth,
  type SessionEvent,
  type Store,
  type StoreConnections,
  type StoreNotice,
  type StoreWrite,
  scheduleAfterFiring,
  withStoreErrors,
} from '@baton/store';
import pg from 'pg';
import { ListenConnection } from './listen-connection.js';
import { MIGRATIONS } from './migrations.js';
import { Channels, controlPayload } from './notices.js';
import { int8AsNumber, type PostgresStoreOptions, SCHEMA_NAME, wholeOption } from './options.js';
import { schemaFound } from './schema-found.js';
import { claimCalls, claimQueued, heldBy } from './sql/claims.js';
import { deleteEndedBefore } from './sql/delete-ended-before.js';
import * as deliveries from './sql/deliveries.js';
import { holdNotifications, releaseNotifications } from './sql/hold-notifications.js';
import * as instances from './sql/instances.js';
import type { Query } from './sql/notification-rows.js';
import * as notifications from './sql/notifications.js';
import { queueDepth } from './sql/queue-depth.js';
import * as reads from './sql/reads.js';
import { isUnavailable } from './unavailable.js';
import { parametersOf, secondTry, WRITE } from './write-parameters.js';

export type { PostgresStoreOptions } from './options.js';

/** The SQLSTATE of a row stored already under the same key. */
const UNIQUE_VIOLATION = '23505';

export class PostgresStore implements Store {
  readonly #pool: pg.Pool;
  readonly #ready: Promise<void>;
  readonly #channels: Channels;
  readonly #listenConnection: ListenConnection;
  readonly writeConcurrency: number;
  readonly writeBatchCalls: number;
  readonly outlivesProcess = true;

  isUnavailable(error: unknown): boolean {
    return isUnavailable(error);
  }

  constructor(options: PostgresStoreOptions) {
    const schema = options.schema ?? 'baton';
    if (!SCHEMA_NAME.test(schema)) {
      throw new Error(
        `postgresStore: schema must be lower-case letters, digits and _, not ${JSON.stringify(schema)}`,
      );
    }
    this.#channels = new Channels(schema);
    this.#listenConnection = new ListenConnection({
      connectionString: options.connectionString,
      types: { getTypeParser: int8AsNumber },
    });
    const connections = wholeOption('maxConnections', options.maxConnections ?? 10);
    this.writeConcurrency = Math.max(
      1,
      Math.min(wholeOption('writeConcurrency', options.writeConcurrency ?? 3), Math.floor(connections / 2)),
    );
    this.writeBatchCalls = wholeOption('writeBatchCalls', options.writeBatchCalls ?? 250);
    this.#pool = new pg.Pool({
      connectionString: options.connectionString,
      max: connections,
      options: `-c search_path=${schema}`,
      types: { getTypeParser: int8AsNumber },
    });
    this.#pool.on('error', () => {
      // An idle connection that the server dropped: the pool replaces it on the next query.
    });
    this.#ready = this.#migrate(schema, options.init === true);
    // Every method awaits #ready and fails with its error; this only keeps it from going unhandled.
    this.#ready.catch(() => {});
  }

  async #migrate(schema: string, init: boolean): Promise<void> {
    await this.#transaction(async (client) => {
      await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`baton-migrations:${schema}`]);
      const found = await schemaFound(client, schema);
      if (found.kind === 'refused' || (found.kind === 'emptied' && !init)) {
        throw new BatonError('persistence_failed', found.message);
      }
      if (found.kind === 'emptied') await client.query(`DROP SCHEMA ${schema} CASCADE`);
      await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
      await client.query(
        'CREATE TABLE IF NOT EXISTS baton_schema (version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())',
      );
      const { rows } = await client.query<{ version: number }>(
        'SELECT coalesce(max(version), 0) AS version FROM baton_schema',
      );
      for (let step = rows[0]?.version ?? 0; step < MIGRATIONS.length; step++) {
        await client.query(MIGRATIONS[step] as string);
        await client.query('INSERT INTO baton_schema (version) VALUES ($1)', [step + 1]);
      }
    });
  }

  async #transaction<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await this.#pool.connect();
    // A connection the server drops while it is checked out (a restart, an admin's kill) emits
    // 'error' with no query to reject: without a listener that error would end the process. The
    // query under way fails by itself; the connection is destroyed on release, not reused.
    let dropped: Error | undefined;
    const onError = (error: Error) => {
      dropped = error;
    };
    client.on('error', onError);
    try {
      await client.query('BEGIN');
      const result = await work(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      // The write failed; a rollback that fails too (the connection is gone) changes nothing.
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    } finally {
      client.off('error', onError);
      client.release(dropped);
    }
  }

  /** `#query` as the operations of `sql/` take it. */
  readonly #statement: Query = (text, values, name) => this.#query(text, values, name);

  /** A query; with `name`, a prepared statement, parsed and planned once per connection (the hot ones). */
  async #query<R extends pg.QueryResultRow>(
    sql: string,
    params: unknown[] = [],
    name?: string,
  ): Promise<R[]> {
    await this.#ready;
    return (
      await this.#pool.query<R>(name ? { name, text: sql, values: params } : { text: sql, values: params })
    ).rows;
  }

  /**
   * A write's first try inserts the rows it makes without ON CONFLICT, which costs PostgreSQL less.
   * A row stored already under the same key fails it (unique_violation): the write made again after
   * its answer was lost, or a clash. The second try is the statement that tells them apart: it takes
   * the write made again as written, and refuses a clash.
   */
  async write(batch: StoreWrite): Promise<void> {
    const values = parametersOf(batch, this.#channels);
    await this.#ready;
    try {
      await this.#writeOnce(values, batch.deliveries ?? []);
    } catch (error) {
      if ((error as { code?: unknown }).code !== UNIQUE_VIOLATION) throw error;
      await this.#writeOnce(secondTry(values), batch.deliveries ?? []);
    }
  }

  async #writeOnce(values: unknown[], deliveries: readonly WebhookDelivery[]): Promise<void> {
    if (deliveries.length === 0) {
      await this.#pool.query({ ...WRITE, values });
      return;
    }
    // A delivery is kept with its notification: the write may refuse the notification (fencing).
    const rows = JSON.stringify(deliveries);
    await this.#transaction(async (client) => {
      await client.query({ ...WRITE, values });
      await client.query(
        `INSERT INTO webhook_deliveries (id, call_id, session_id, status, next_at, delivery)
         SELECT x->>'id', x->>'callId', x->>'sessionId', x->>'status', (x->>'nextAt')::bigint, x
         FROM jsonb_array_elements($1::jsonb) AS x
         WHERE EXISTS (SELECT 1 FROM notifications AS n WHERE n.id = x->>'notificationId')
         ON CONFLICT (id) DO NOTHING`,
        [rows],
      );
    });
  }

  getCall(callId: string): Promise<CallRecord | undefined> {
    return reads.getCall(this.#statement, callId);
  }

  getCalls(callIds: readonly string[]): Promise<CallRecord[]> {
    return reads.getCalls(this.#statement, callIds);
  }

  listCalls(filter?: CallFilter): Promise<CallPage> {
    return reads.listCalls(this.#statement, filter);
  }

  listEvents(callId: string, fromSeq?: number, limit?: number): Promise<CallEvent[]> {
    return reads.listEvents(this.#statement, callId, fromSeq, limit);
  }

  listSessionEvents(sessionId: string, afterPosition?: number, limit?: number): Promise<SessionEvent[]> {
    return reads.listSessionEvents(this.#statement, sessionId, afterPosition, limit);
  }

  getArtifact(callId: string, name: string): Promise<string | undefined> {
    return reads.getArtifact(this.#statement, callId, name);
  }

  listArtifacts(callId: string): Promise<string[]> {
    return reads.listArtifacts(this.#statement, callId);
  }

  listSteps(callId: string): Promise<StepResult[]> {
    return reads.listSteps(this.#statement, callId);
  }

  getResolution(key: string): Promise<EventResolution | undefined> {
    return reads.getResolution(this.#statement, key);
  }

  listSchedules(filter?: { sessionId?: string; enabled?: boolean }): Promise<Schedule[]> {
    return reads.listSchedules(this.#statement, filter);
  }

  listNotifications(filter?: NotificationFilter): Promise<Notification[]> {
    return notifications.listNotifications(this.#statement, filter);
  }

  countNotifications(filter?: NotificationCountFilter): Promise<number> {
    return notifications.countNotifications(this.#statement, filter);
  }

  acknowledgeNotification(id: string, at: number): Promise<boolean> {
    return notifications.acknowledgeNotification(this.#statement, id, at);
  }

  holdNotifications(hold: NotificationHold): Promise<Notification[]> {
    return holdNotifications(this.#statement, hold);
  }

  releaseNotifications(ids: readonly string[], holder: string): Promise<void> {
    return releaseNotifications(this.#statement, ids, holder);
  }

  claimDeliveries(ownerId: string, now: number, leaseMs: number, limit: number): Promise<WebhookDelivery[]> {
    return deliveries.claimDeliveries(this.#statement, ownerId, now, leaseMs, limit);
  }

  settleDelivery(delivery: WebhookDelivery, ownerId: string): Promise<boolean> {
    return deliveries.settleDelivery(this.#statement, delivery, ownerId);
  }

  listDeliveries(filter?: DeliveryFilter): Promise<WebhookDelivery[]> {
    return deliveries.listDeliveries(this.#statement, filter);
  }

  countDeliveries(filter?: DeliveryCountFilter): Promise<number> {
    return deliveries.countDeliveries(this.#statement, filter);
  }

  async claimFiring(
    scheduleId: string,
    dueAt: number,
    next: { nextAt?: number; enabled: boolean },
  ): Promise<boolean> {
    await this.#ready;
    return this.#transaction(async (client) => {
      // The row lock makes a second claimer wait, then see the schedule already moved on.
      const { rows } = await client.query<{ schedule: Schedule }>(
        'SELECT schedule FROM schedules WHERE id = $1 AND enabled AND next_at = $2 FOR UPDATE',
        [scheduleId, dueAt],
      );
      const schedule = rows[0]?.schedule;
      if (!schedule) return false;
      const claimed = scheduleAfterFiring(schedule, next);
      await client.query('UPDATE schedules SET enabled = $2, next_at = $3, schedule = $4 WHERE id = $1', [
        scheduleId,
        claimed.enabled,
        claimed.nextAt ?? null,
        JSON.stringify(claimed),
      ]);
      return true;
    });
  }

  async deleteEndedBefore(time: number, limit?: number): Promise<number> {
    await this.#ready;
    return this.#transaction((client) => deleteEndedBefore(client, time, limit));
  }

  registerInstance(instance: RuntimeInstance): Promise<void> {
    return instances.registerInstance(this.#statement, instance);
  }

  heartbeat(instanceId: string, at: number): Promise<boolean> {
    return instances.heartbeat(this.#statement, instanceId, at);
  }

  listInstances(): Promise<RuntimeInstance[]> {
    return instances.listInstances(this.#statement);
  }

  removeInstance(instanceId: string): Promise<void> {
    return instances.removeInstance(this.#statement, instanceId);
  }

  claimQueued(ownerId: string, limit: number, callId?: string): Promise<ClaimedCall[]> {
    return claimQueued(this.#statement, ownerId, limit, callId);
  }

  heldBy(ownerId: string): Promise<ClaimedCall[]> {
    return heldBy(this.#statement, ownerId);
  }

  queueDepth(): Promise<QueueDepth> {
    return queueDepth(this.#statement);
  }

  connections(): StoreConnections {
    const { totalCount, idleCount, waitingCount } = this.#pool;
    return { inUse: totalCount - idleCount, idle: idleCount, waiting: waitingCount };
  }

  async claimCalls(goneInstanceIds: readonly string[], ownerId: string): Promise<CallRecord[]> {
    if (goneInstanceIds.length === 0) return [];
    await this.#ready;
    return this.#transaction((client) => claimCalls(client, goneInstanceIds, ownerId));
  }

  listen(listener: (notice: StoreNotice) => void, topic: NoticeTopic): () => void {
    return this.#listenConnection.listen(this.#channels.of(topic), listener);
  }

  async send(control: CallControl): Promise<void> {
    // Kept and told in one statement: the NOTIFY goes out when the row commits.
    await this.#query(
      `WITH kept AS (INSERT INTO requests (call_id, request) VALUES ($1, $2::jsonb))
       SELECT pg_notify($3, $4)`,
      [control.callId, JSON.stringify(control), this.#channels.work, controlPayload(control)],
      'baton_send',
    );
  }

  async requestsFor(callIds: readonly string[]): Promise<CallControl[]> {
    if (callIds.length === 0) return [];
    const rows = await this.#query<{ request: CallControl }>(
      'SELECT request FROM requests WHERE call_id = ANY($1::text[]) ORDER BY position',
      [[...new Set(callIds)]],
      'baton_requests_for',
    );
    return rows.map((row) => row.request);
  }

  async close(): Promise<void> {
    await this.#listenConnection.close();
    // Closing: a migration that failed (reported to every caller already) must not keep the pool open.
    await this.#ready.catch(() => {});
    await this.#pool.end();
  }
}

export function postgresStore(options: PostgresStoreOptions): Store {
  return withStoreErrors(new PostgresStore(options));
}
