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
  cursorPosition,
  DEFAULT_PAGE_SIZE,
  type DeliveryCountFilter,
  type DeliveryFilter,
  type InstanceRow,
  instanceOfRow,
  type NoticeTopic,
  type NotificationCountFilter,
  type NotificationFilter,
  type NotificationHold,
  type QueueDepth,
  ROW_EVENTS_MAX,
  type SessionEvent,
  type Store,
  type StoreNotice,
  type StoreWrite,
  scheduleAfterFiring,
  withStoreErrors,
} from '@baton/store';
import pg from 'pg';
import { ListenConnection } from './listen-connection.js';
import { MIGRATIONS } from './migrations.js';
import { Channels, controlPayload } from './notices.js';
import { schemaFound } from './schema-found.js';
import { holdNotifications, releaseNotifications } from './sql/hold-notifications.js';
import { type NotificationRow, notificationOf, type Query } from './sql/notification-rows.js';
import { queueDepth } from './sql/queue-depth.js';
import { isUnavailable } from './unavailable.js';
import { parametersOf, secondTry, WRITE } from './write-parameters.js';

export interface PostgresStoreOptions {
  /** `postgres://user:password@host:port/database` */
  connectionString: string;
  /** The schema that holds Baton's tables, made if missing. Default `baton`. */
  schema?: string;
  /** Connections in the pool. Default 10. */
  maxConnections?: number;
  /**
   * Write batches in flight at once, each its own transaction on its own connection, so the
   * database is kept busy while the runtime runs the calls of the next; one call's writes stay in
   * order. At most half the connections: the rest read and claim. Default 3.
   *
   * Taken by a runtime in the role `both` (it runs the calls it writes). A client or a worker alone
   * writes one batch at a time, each tick whole: measured with a client and a worker process,
   * pipelining cost the client more CPU per call for no more calls per second.
   */
  writeConcurrency?: number;
  /**
   * At most this many calls' rows in one write batch (see `Store.writeBatchCalls`), with the same
   * proviso; the runtime cuts a tick into about four batches of its calls in flight, of at least
   * 100 calls. Default 250: with 1,000 calls in flight in one process, four batches take turns,
   * and did more calls a second than whole ticks (`bench/RESULTS.md`, row 8).
   */
  writeBatchCalls?: number;
  /**
   * Start afresh on purpose in a schema that exists and holds no Baton store (emptied, or made
   * empty for it), or whose store lost its tables: such a schema is otherwise refused, so that a
   * store that was emptied is not silently replaced. A schema of another program is refused anyway.
   */
  init?: boolean;
}

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,55}$/;

/** A count among the options: a whole number of at least 1. */
function wholeOption(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1) {
    throw new Error(`postgresStore: ${name} must be a whole number of at least 1, not ${String(value)}`);
  }
  return value;
}
const INT8_OID = 20;
/** The SQLSTATE of a row stored already under the same key. */
const UNIQUE_VIOLATION = '23505';

/** Times in milliseconds since the epoch are BIGINT; they fit a JavaScript number. */
const int8AsNumber = ((oid: number, format?: 'text' | 'binary') =>
  oid === INT8_OID ? Number : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser;

type CallRow = { position: number; record: CallRecord; owner_id: string | null };
function recordOf(row: Pick<CallRow, 'record' | 'owner_id'>): CallRecord {
  const record = row.record;
  if (row.owner_id !== null) record.ownerId = row.owner_id;
  return record;
}

/** `WHERE a AND b` over the conditions that are set, each written with `?` for its one parameter. */
function whereOf(conditions: ReadonlyArray<readonly [sql: string, param: unknown] | undefined>, first = 1) {
  const set = conditions.filter((condition) => condition !== undefined);
  let n = first;
  const clauses = set.map(([sql]) => sql.replace('?', () => `$${n++}`));
  return {
    where: clauses.length > 0 ? `WHERE ${clauses.join(' AND ')}` : '',
    params: set.map(([, param]) => param),
    next: n,
  };
}

function deliveryConditions(filter: DeliveryFilter) {
  return [
    filter.status === undefined ? undefined : (['status = ?', filter.status] as const),
    ...sessionConditions(filter),
    filter.callId === undefined ? undefined : (['call_id = ?', filter.callId] as const),
  ];
}

function sessionConditions(filter: { sessionId?: string; sessionPrefix?: string }) {
  return [
    filter.sessionId === undefined ? undefined : (['session_id = ?', filter.sessionId] as const),
    filter.sessionPrefix === undefined
      ? undefined
      : (['starts_with(session_id, ?)', filter.sessionPrefix] as const),
  ];
}

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

  async getCall(callId: string): Promise<CallRecord | undefined> {
    const [row] = await this.#query<Pick<CallRow, 'record' | 'owner_id'>>(
      'SELECT record, owner_id FROM calls WHERE call_id = $1',
      [callId],
      'baton_get_call',
    );
    return row && recordOf(row);
  }

  async getCalls(callIds: readonly string[]): Promise<CallRecord[]> {
    if (callIds.length === 0) return [];
    // A client reads every reply with this: only the columns a record is made of.
    const rows = await this.#query<Pick<CallRow, 'record' | 'owner_id'>>(
      'SELECT record, owner_id FROM calls WHERE call_id = ANY($1::text[])',
      [[...new Set(callIds)]],
      'baton_get_calls',
    );
    return rows.map(recordOf);
  }

  async listCalls(filter: CallFilter = {}): Promise<CallPage> {
    const limit = filter.limit ?? DEFAULT_PAGE_SIZE;
    const statuses = typeof filter.status === 'string' ? [filter.status] : filter.status;
    const { where, params, next } = whereOf([
      filter.cursor === undefined ? undefined : ['position < ?', cursorPosition(filter.cursor)],
      ...sessionConditions(filter),
      filter.toolName === undefined ? undefined : ['tool_name = ?', filter.toolName],
      statuses === undefined ? undefined : ['status = ANY(?)', statuses],
    ]);
    const rows = await this.#query<CallRow>(
      `SELECT position, record, owner_id FROM calls ${where} ORDER BY position DESC LIMIT $${next}`,
      [...params, limit + 1],
    );
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    return {
      calls: page.map(recordOf),
      ...(rows.length > limit && last ? { nextCursor: String(last.position) } : {}),
    };
  }

  async listEvents(callId: string, fromSeq = 0, limit?: number): Promise<CallEvent[]> {
    // LIMIT NULL is PostgreSQL's "no limit".
    const rows = await this.#query<{ event: CallEvent }>(
      `SELECT e.event
       FROM (SELECT seq, events FROM event_rows WHERE call_id = $1 AND last_seq >= $2
             ORDER BY seq LIMIT $3) AS r,
            json_array_elements(r.events) WITH ORDINALITY AS e(event, n)
       WHERE r.seq + e.n - 1 >= $2
       ORDER BY r.seq, e.n LIMIT $3`,
      [callId, fromSeq, limit ?? null],
    );
    return rows.map((row) => row.event);
  }

  async listSessionEvents(sessionId: string, afterPosition = 0, limit?: number): Promise<SessionEvent[]> {
    // The row that holds the position may hold events after it (a page may end inside a row):
    // rows take positions 256 apart, so it starts less than 256 before. Then as many rows as
    // events asked for, each holding one at least.
    return this.#query<SessionEvent>(
      `SELECT r.position + e.n - 1 AS position, e.event
       FROM (SELECT position, events FROM event_rows
             WHERE session_id = $1 AND position > $2 - ${ROW_EVENTS_MAX} AND position + (last_seq - seq) > $2
             ORDER BY position LIMIT $3) AS r,
            json_array_elements(r.events) WITH ORDINALITY AS e(event, n)
       WHERE r.position + e.n - 1 > $2
       ORDER BY r.position, e.n LIMIT $3`,
      [sessionId, afterPosition, limit ?? null],
    );
  }

  async listNotifications(filter: NotificationFilter = {}): Promise<Notification[]> {
    const { where, params } = whereOf([
      ...sessionConditions(filter),
      filter.status === undefined ? undefined : ['status = ?', filter.status],
      filter.id === undefined ? undefined : ['id = ?', filter.id],
      filter.after === undefined
        ? undefined
        : [
            '(created_at, position) > (SELECT created_at, position FROM notifications WHERE id = ?)',
            filter.after,
          ],
    ]);
    const limit = filter.limit === undefined ? '' : ` LIMIT ${Math.max(0, Math.floor(filter.limit))}`;
    const rows = await this.#query<NotificationRow>(
      `SELECT notification, status, acknowledged_at FROM notifications ${where} ORDER BY created_at, position${limit}`,
      params,
    );
    return rows.map(notificationOf);
  }

  async countNotifications(filter: NotificationCountFilter = {}): Promise<number> {
    const { where, params } = whereOf([
      ...sessionConditions(filter),
      filter.status === undefined ? undefined : ['status = ?', filter.status],
    ]);
    const [row] = await this.#query<{ count: string }>(
      `SELECT COUNT(*) AS count FROM notifications ${where}`,
      params,
    );
    return Number(row?.count ?? 0);
  }

  async acknowledgeNotification(id: string, at: number): Promise<boolean> {
    const rows = await this.#query(
      "UPDATE notifications SET status = 'acknowledged', acknowledged_at = $1 WHERE id = $2 AND status = 'queued' RETURNING id",
      [at, id],
    );
    return rows.length === 1;
  }

  holdNotifications(hold: NotificationHold): Promise<Notification[]> {
    return holdNotifications(this.#statement, hold);
  }

  releaseNotifications(ids: readonly string[], holder: string): Promise<void> {
    return releaseNotifications(this.#statement, ids, holder);
  }

  async claimDeliveries(
    ownerId: string,
    now: number,
    leaseMs: number,
    limit: number,
  ): Promise<WebhookDelivery[]> {
    // SKIP LOCKED: processes that claim at once each take different deliveries, without waiting.
    const rows = await this.#query<{ next_at: number; position: number; delivery: WebhookDelivery }>(
      `UPDATE webhook_deliveries SET owner_id = $1, lease_until = $2 WHERE position IN (
         SELECT position FROM webhook_deliveries
         WHERE status = 'pending' AND next_at <= $3 AND (lease_until IS NULL OR lease_until <= $3)
         ORDER BY next_at, position LIMIT $4 FOR UPDATE SKIP LOCKED)
       RETURNING next_at, position, delivery`,
      [ownerId, now + leaseMs, now, limit],
    );
    return rows.sort((a, b) => a.next_at - b.next_at || a.position - b.position).map((row) => row.delivery);
  }

  async settleDelivery(delivery: WebhookDelivery, ownerId: string): Promise<boolean> {
    const rows = await this.#query(
      `UPDATE webhook_deliveries SET status = $1, next_at = $2, owner_id = NULL, lease_until = NULL, delivery = $3
       WHERE id = $4 AND owner_id = $5 AND lease_until IS NOT NULL RETURNING id`,
      [delivery.status, delivery.nextAt, JSON.stringify(delivery), delivery.id, ownerId],
    );
    return rows.length === 1;
  }

  async listDeliveries(filter: DeliveryFilter = {}): Promise<WebhookDelivery[]> {
    const { where, params, next } = whereOf(deliveryConditions(filter));
    const rows = await this.#query<{ delivery: WebhookDelivery }>(
      `SELECT delivery FROM webhook_deliveries ${where} ORDER BY position DESC LIMIT $${next}`,
      [...params, filter.limit ?? DEFAULT_PAGE_SIZE],
    );
    return rows.map((row) => row.delivery);
  }

  async countDeliveries(filter: DeliveryCountFilter = {}): Promise<number> {
    const { where, params } = whereOf(deliveryConditions(filter));
    const [row] = await this.#query<{ count: string }>(
      `SELECT COUNT(*) AS count FROM webhook_deliveries ${where}`,
      params,
    );
    return Number(row?.count ?? 0);
  }

  async getArtifact(callId: string, name: string): Promise<string | undefined> {
    const [row] = await this.#query<{ content: string }>(
      'SELECT content FROM artifacts WHERE call_id = $1 AND name = $2',
      [callId, name],
    );
    return row?.content;
  }

  async listArtifacts(callId: string): Promise<string[]> {
    const rows = await this.#query<{ name: string }>(
      'SELECT name FROM artifacts WHERE call_id = $1 ORDER BY name',
      [callId],
    );
    return rows.map((row) => row.name);
  }

  async listSteps(callId: string): Promise<StepResult[]> {
    const rows = await this.#query<{ step_id: string; value: unknown }>(
      'SELECT step_id, value FROM steps WHERE call_id = $1',
      [callId],
    );
    return rows.map((row) => ({ callId, stepId: row.step_id, value: row.value }));
  }

  async getResolution(key: string): Promise<EventResolution | undefined> {
    const [row] = await this.#query<{
      key: string;
      call_id: string;
      outcome: EventResolution['outcome'];
      at: number;
    }>('SELECT key, call_id, outcome, at FROM event_resolutions WHERE key = $1', [key]);
    return row && { key: row.key, callId: row.call_id, outcome: row.outcome, at: row.at };
  }

  async listSchedules(filter: { sessionId?: string; enabled?: boolean } = {}): Promise<Schedule[]> {
    const { where, params } = whereOf([
      filter.sessionId === undefined ? undefined : ['session_id = ?', filter.sessionId],
      filter.enabled === undefined ? undefined : ['enabled = ?', filter.enabled],
    ]);
    const rows = await this.#query<{ schedule: Schedule }>(
      `SELECT schedule FROM schedules ${where} ORDER BY position`,
      params,
    );
    return rows.map((row) => row.schedule);
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
    return this.#transaction(async (client) => {
      // The calls are locked first, so each statement after removes the rows of the same calls.
      const { rows } = await client.query<{ call_id: string }>(
        // A call that ended before the time was created before it (calls_by_creation).
        'SELECT call_id FROM calls WHERE created_at < $1 AND ended_at < $1 ORDER BY created_at LIMIT $2 FOR UPDATE',
        [time, limit ?? null],
      );
      const ids = rows.map((row) => row.call_id);
      if (ids.length === 0) return 0;
      for (const table of ['event_rows', 'artifacts', 'steps', 'event_resolutions', 'requests']) {
        await client.query(`DELETE FROM ${table} WHERE call_id = ANY($1)`, [ids]);
      }
      await client.query("DELETE FROM notifications WHERE status = 'acknowledged' AND call_id = ANY($1)", [
        ids,
      ]);
      await client.query("DELETE FROM webhook_deliveries WHERE status <> 'pending' AND call_id = ANY($1)", [
        ids,
      ]);
      // An ended call is in neither call_queue nor call_owners: the trigger that would look is not needed.
      await client.query("SELECT set_config('baton.keeps_calls', 'on', true)");
      await client.query('DELETE FROM calls WHERE call_id = ANY($1)', [ids]);
      // The last batch also takes the notifications acknowledged, and the deliveries settled,
      // after their call was removed.
      if (limit === undefined || ids.length < limit) {
        await client.query(
          "DELETE FROM notifications n WHERE status = 'acknowledged' AND NOT EXISTS (SELECT 1 FROM calls c WHERE c.call_id = n.call_id)",
        );
        await client.query(
          "DELETE FROM webhook_deliveries d WHERE status <> 'pending' AND NOT EXISTS (SELECT 1 FROM calls c WHERE c.call_id = d.call_id)",
        );
        // And the requests whose call a process of an earlier version removed (it knew no requests).
        await client.query(
          'DELETE FROM requests r WHERE NOT EXISTS (SELECT 1 FROM calls c WHERE c.call_id = r.call_id)',
        );
      }
      return ids.length;
    });
  }

  async registerInstance(instance: RuntimeInstance): Promise<void> {
    await this.#query(
      `INSERT INTO instances (id, host, pid, boot, started_at, heartbeat_at, lease_ms, protocol)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
       ON CONFLICT (id) DO UPDATE SET heartbeat_at = excluded.heartbeat_at, lease_ms = excluded.lease_ms`,
      [
        instance.id,
        instance.host,
        instance.pid,
        instance.boot,
        instance.startedAt,
        instance.heartbeatAt,
        instance.leaseMs,
        instance.protocol,
      ],
    );
  }

  async heartbeat(instanceId: string, at: number): Promise<boolean> {
    const rows = await this.#query('UPDATE instances SET heartbeat_at = $1 WHERE id = $2 RETURNING id', [
      at,
      instanceId,
    ]);
    return rows.length === 1;
  }

  queueDepth(): Promise<QueueDepth> {
    return queueDepth(this.#statement);
  }

  async listInstances(): Promise<RuntimeInstance[]> {
    return (await this.#query<InstanceRow>('SELECT * FROM instances')).map(instanceOfRow);
  }

  async removeInstance(instanceId: string): Promise<void> {
    await this.#query('DELETE FROM instances WHERE id = $1', [instanceId]);
  }

  async claimCalls(goneInstanceIds: readonly string[], ownerId: string): Promise<CallRecord[]> {
    if (goneInstanceIds.length === 0) return [];
    await this.#ready;
    return this.#transaction(async (client) => {
      // A second claimer waits on the row locks, then sees the new owner and takes nothing.
      const { rows } = await client.query<Pick<CallRow, 'record' | 'owner_id'>>(
        `SELECT claimed_record AS record, claimed_owner AS owner_id FROM baton_claim_orphans($1, $2)
         ORDER BY claimed_position`,
        [ownerId, goneInstanceIds],
      );
      await client.query('DELETE FROM instances WHERE id = ANY($1)', [goneInstanceIds]);
      return rows.map(recordOf);
    });
  }

  async claimQueued(ownerId: string, limit: number, callId?: string): Promise<ClaimedCall[]> {
    // SKIP LOCKED: workers that claim at once each take different calls, without waiting (see
    // baton_claim in sql/).
    const rows = await this.#query<
      Pick<CallRow, 'record' | 'owner_id'> & { last_seq: number; requests: CallControl[] | null }
    >(
      `SELECT claimed_record AS record, claimed_owner AS owner_id, claimed_last_seq AS last_seq,
         claimed_requests AS requests FROM baton_claim($1, $2, $3)`,
      [ownerId, limit, callId ?? null],
      'baton_claim',
    );
    return rows.map((row) => ({
      record: recordOf(row),
      lastSeq: row.last_seq,
      ...(row.requests === null ? {} : { requests: row.requests }),
    }));
  }

  async heldBy(ownerId: string): Promise<ClaimedCall[]> {
    const rows = await this.#query<
      Pick<CallRow, 'record' | 'owner_id'> & { last_seq: number; requests: CallControl[] | null }
    >(
      `SELECT c.record, c.owner_id,
         coalesce((SELECT r.last_seq FROM event_rows AS r WHERE r.call_id = c.call_id
                   ORDER BY r.seq DESC LIMIT 1), 0) AS last_seq,
         (SELECT json_agg(q.request ORDER BY q.position) FROM requests AS q
          WHERE q.call_id = c.call_id) AS requests
       FROM calls AS c
       WHERE c.position = ANY(ARRAY(SELECT o.position FROM call_owners AS o WHERE o.owner_id = $1))
         AND baton_holder(c.status, c.owner_id, c.ended_at) = $1
       ORDER BY c.position`,
      [ownerId],
    );
    return rows.map((row) => ({
      record: recordOf(row),
      lastSeq: row.last_seq,
      ...(row.requests === null ? {} : { requests: row.requests }),
    }));
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
