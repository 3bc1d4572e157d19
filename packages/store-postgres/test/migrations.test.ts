import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CallEvent } from '@baton/contracts';
import type { StoreNotice } from '@baton/store';
import { makeCallRecord } from '@baton/store/testing';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresStore } from '../src/index.js';
import { MIGRATIONS } from '../src/migrations.js';
import { Channels } from '../src/notices.js';
import { type ThrowawayPostgres, throwawayPostgres } from '../src/testing.js';

let server: ThrowawayPostgres;
beforeAll(async () => {
  server = await throwawayPostgres();
}, 60_000);
afterAll(() => server.stop());

function event(callId: string, seq: number): CallEvent {
  return {
    type: 'progress',
    callId,
    sessionId: 's',
    toolName: 't',
    seq,
    at: seq,
    progress: { current: seq },
  };
}

/** A schema as a store of an earlier version left it: the first `steps` migrations, and some rows. */
async function schemaAtStep(schema: string, steps: number, { rows = true } = {}): Promise<void> {
  const client = new pg.Client({ connectionString: server.url });
  await client.connect();
  try {
    await client.query(`CREATE SCHEMA ${schema}; SET search_path = ${schema}`);
    await client.query(
      'CREATE TABLE baton_schema (version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())',
    );
    for (let step = 0; step < steps; step++) {
      await client.query(MIGRATIONS[step] as string);
      await client.query('INSERT INTO baton_schema (version) VALUES ($1)', [step + 1]);
    }
    if (!rows) return;
    const record = makeCallRecord({ callId: 'old', sessionId: 's' });
    await client.query(
      'INSERT INTO calls (call_id, session_id, tool_name, status, record) VALUES ($1, $2, $3, $4, $5)',
      [record.callId, record.sessionId, record.toolName, record.status, JSON.stringify(record)],
    );
    for (const seq of [1, 2]) {
      await client.query('INSERT INTO events (call_id, seq, session_id, event) VALUES ($1, $2, $3, $4)', [
        'old',
        seq,
        's',
        JSON.stringify(event('old', seq)),
      ]);
    }
  } finally {
    await client.end();
  }
}

/** PostgreSQL's own `pg_dump`, of the newest installed version (Debian's layout), or the one on the PATH. */
function pgDump(): string {
  const root = '/usr/lib/postgresql';
  const version = existsSync(root) ? readdirSync(root).sort().at(-1) : undefined;
  return version ? join(root, version, 'bin', 'pg_dump') : 'pg_dump';
}

/** A schema as `pg_dump` writes it, without what changes from run to run, and named `baton`. */
function schemaOf(schema: string): string {
  const dump = execFileSync(
    pgDump(),
    ['--schema-only', '--no-owner', '--no-privileges', `--schema=${schema}`, server.url],
    { encoding: 'utf8' },
  );
  return `${dump
    .split('\n')
    .filter((line) => !/^(--|SET |SELECT pg_catalog\.set_config|\\(un)?restrict )/.test(line))
    .join('\n')
    .replaceAll(`${schema}.`, 'baton.')
    .replaceAll(`SCHEMA ${schema}`, 'SCHEMA baton')
    .replace(/\n{3,}/g, '\n\n')
    .trim()}\n`;
}

/** Two schemas compared by what they do: a function's body may differ in its spaces and newlines. */
function comparable(schema: string): string {
  return schema.replaceAll("E'\n'", "E'\\n'").replace(/\s+/g, ' ');
}

/** Opens a store on a schema (which runs the steps it lacks), and closes it. */
async function openOn(schema: string): Promise<void> {
  const store = postgresStore({ connectionString: server.url, schema });
  try {
    await store.listCalls({ limit: 1 });
  } finally {
    await store.close();
  }
}

const SNAPSHOT = join(import.meta.dirname, '..', 'sql', 'schema.sql');

describe('the PostgreSQL schema', () => {
  it('is, freshly made by the numbered SQL steps, the checked-in sql/schema.sql (BATON_UPDATE_SCHEMA=1 writes it)', async () => {
    const schema = `fresh_${process.pid}`;
    await openOn(schema);
    const made = schemaOf(schema);
    if (process.env.BATON_UPDATE_SCHEMA === '1') writeFileSync(SNAPSHOT, made);
    expect(made).toBe(readFileSync(SNAPSHOT, 'utf8'));
  });

  // Every step from every earlier step: about a second on a quiet 2-core machine, several when
  // both cores are busy; a limit sized for the busy one.
  it('is the same for a database left at any earlier step, once a store opens it', {
    timeout: 60_000,
  }, async () => {
    const expected = readFileSync(SNAPSHOT, 'utf8');
    for (let steps = 1; steps < MIGRATIONS.length; steps++) {
      const schema = `at_step_${steps}_${process.pid}`;
      await schemaAtStep(schema, steps, { rows: false });
      await openOn(schema);
      expect(schemaOf(schema), `from step ${steps}`).toBe(expected);
    }
  });

  it('is the same for a database the TypeScript migrations made, before the steps were SQL files', async () => {
    const schema = `before_sql_files_${process.pid}`;
    const client = new pg.Client({ connectionString: server.url });
    await client.connect();
    try {
      const fixture = readFileSync(
        join(import.meta.dirname, 'fixtures', 'schema-before-sql-files.sql'),
        'utf8',
      );
      await client.query(fixture.replaceAll('__SCHEMA__', schema));
    } finally {
      await client.end();
    }
    await openOn(schema);
    expect(comparable(schemaOf(schema))).toBe(comparable(readFileSync(SNAPSHOT, 'utf8')));
  });
});

describe('PostgreSQL migrations on a database of an earlier version', () => {
  it('keeps the events of an earlier version: read, numbered and followed as before, other events under their numbers refused', async () => {
    const schema = `before_step_7_${process.pid}`;
    await schemaAtStep(schema, 6);
    const store = postgresStore({ connectionString: server.url, schema });
    try {
      expect(await store.listEvents('old')).toEqual([event('old', 1), event('old', 2)]);
      const before = await store.listSessionEvents('s');
      await store.write({ events: [event('old', 3), event('old', 4)] });
      const session = await store.listSessionEvents('s');
      expect(session.map(({ event: { seq } }) => seq)).toEqual([1, 2, 3, 4]);
      expect(session.slice(0, 2)).toEqual(before);
      expect(await store.listSessionEvents('s', before[1]?.position)).toEqual(session.slice(2));
      expect(session[2]?.position).toBeGreaterThan(session[1]?.position ?? Number.POSITIVE_INFINITY);
      // Other events under numbers stored already are refused; the same event again (a write
      // made again, its answer lost) is kept once.
      await expect(store.write({ events: [{ ...event('old', 2), at: 99 }] })).rejects.toThrow();
      await expect(store.write({ events: [{ ...event('old', 4), at: 99 }] })).rejects.toThrow();
      await store.write({ events: [event('old', 2)] });
      expect(await store.listEvents('old')).toEqual([1, 2, 3, 4].map((seq) => event('old', seq)));
      const client = new pg.Client({ connectionString: server.url });
      await client.connect();
      const { rows } = await client.query(
        `SELECT tablename, indexdef FROM pg_indexes WHERE schemaname = $1 AND tablename = 'event_rows' ORDER BY indexname`,
        [schema],
      );
      const identity = await client.query(`SELECT relreplident FROM pg_class WHERE oid = $1::regclass`, [
        `${schema}.event_rows`,
      ]);
      await client.end();
      expect(identity.rows).toEqual([{ relreplident: 'i' }]);
      // Two indexes: the call's (call_id, seq) and the session's; none of the position alone.
      expect(rows.map(({ indexdef }) => (indexdef as string).replace(/^.* ON /, ''))).toEqual([
        `${schema}.event_rows USING btree (session_id, "position")`,
        `${schema}.event_rows USING btree (call_id, seq)`,
      ]);
    } finally {
      await store.close();
    }
  });

  it('takes the writes of a process of the previous version while this one starts, and their events read as before', async () => {
    const schema = `before_step_9_${process.pid}`;
    await schemaAtStep(schema, 8);
    const store = postgresStore({ connectionString: server.url, schema });
    const client = new pg.Client({ connectionString: server.url });
    await client.connect();
    try {
      await store.write({ events: [event('old', 3)] });
      // The statement of step 8's store, as it was written: a flat array of events.
      await client.query(`SET search_path = ${schema}`);
      await client.query(
        `SELECT baton_write_notifying($1::json, $2::json, NULL, NULL, NULL, NULL, NULL, NULL, $3::text[], '[]'::json)`,
        [
          JSON.stringify([makeCallRecord({ callId: 'new', sessionId: 's' })]),
          JSON.stringify([event('new', 1), event('old', 4), event('new', 2)]),
          ['s'],
        ],
      );
      const session = await store.listSessionEvents('s');
      expect(session.map(({ event: { callId, seq } }) => `${callId}${seq}`)).toEqual([
        'old1',
        'old2',
        'old3',
        'new1',
        'old4',
        'new2',
      ]);
      expect(await store.listEvents('new')).toEqual([event('new', 1), event('new', 2)]);
      // Its reads: the events one a row, numbered as this version numbers them.
      const { rows } = await client.query(
        `SELECT position::float8 AS position, event FROM events WHERE session_id = 's' ORDER BY position`,
      );
      expect(rows).toEqual(session);
      // And its retention sweep, which removes a call's events by call_id.
      await client.query('DELETE FROM events WHERE call_id = ANY($1)', [['new']]);
      expect(await store.listEvents('new')).toEqual([]);
      expect((await store.listEvents('old')).map(({ seq }) => seq)).toEqual([1, 2, 3, 4]);
    } finally {
      await client.end();
      await store.close();
    }
  });

  it('takes the records and events of a process of the previous version (json rows) while this one writes lines', async () => {
    const schema = `before_lines_${process.pid}`;
    const lines = MIGRATIONS.findIndex((step) => step.includes('CREATE FUNCTION baton_write_lines('));
    await schemaAtStep(schema, lines, { rows: false });
    const client = new pg.Client({ connectionString: server.url });
    await client.connect();
    await client.query(`SET search_path = ${schema}`);
    // The statement of the previous version's store, as it was written.
    const previousWrite = (calls: unknown[], rows: unknown[]) =>
      client.query(
        'SELECT baton_write_rows($1::json, $2::json, NULL, NULL, NULL, NULL, NULL, NULL, $3::text[], $4::json)',
        [JSON.stringify(calls), JSON.stringify(rows), ['s'], '[]'],
      );
    const row = (callId: string, seqs: number[]) => ({
      callId,
      sessionId: 's',
      seq: seqs[0],
      lastSeq: seqs.at(-1),
      events: seqs.map((seq) => event(callId, seq)),
    });
    const old = makeCallRecord({ callId: 'old', sessionId: 's' });
    await previousWrite([old], [row('old', [1, 2])]);
    const store = postgresStore({ connectionString: server.url, schema });
    try {
      const current = makeCallRecord({
        callId: 'new',
        sessionId: 's',
        status: 'inline',
        args: { text: 'a\nb' },
      });
      await store.write({ calls: [current], events: [event('new', 1), event('old', 3)] });
      const finished = { ...old, status: 'succeeded' as const, endedAt: 5, result: 'done' };
      await previousWrite([finished], [row('old', [4])]);
      await expect(
        previousWrite([], [{ ...row('new', [1]), events: [{ ...event('new', 1), at: 99 }] }]),
      ).rejects.toThrow();
      expect(await store.getCall('old')).toEqual(finished);
      expect(await store.getCall('new')).toEqual(current);
      const session = await store.listSessionEvents('s');
      expect(session.map(({ event: { callId, seq } }) => `${callId}${seq}`)).toEqual([
        'old1',
        'old2',
        'new1',
        'old3',
        'old4',
      ]);
    } finally {
      await client.end();
      await store.close();
    }
  });
  it('takes the writes of a process of step 15 (its notices as JSON) while this one starts: stored, and each notice heard as it was sent', async () => {
    const schema = `step_15_writes_${process.pid}`;
    const store = postgresStore({ connectionString: server.url, schema });
    const client = new pg.Client({ connectionString: server.url });
    await client.connect();
    let stop: (() => void) | undefined;
    try {
      let listened = () => {};
      const listening = new Promise<void>((resolve) => {
        listened = resolve;
      });
      const heard = new Promise<StoreNotice>((resolve) => {
        stop = store.listen?.(
          (notice) => {
            if (notice.type === 'listening') listened();
            if (notice.type === 'events') resolve(notice);
          },
          { type: 'events' },
        );
      });
      // The store opens (and migrates) first, and listens.
      await store.getCall('opened');
      await listening;
      const record = makeCallRecord({ callId: 'c1', sessionId: 's' });
      const told = { type: 'events', callIds: ['c1'], sessionIds: ['s'], writer: 'previous' };
      await client.query(`SET search_path = ${schema}`);
      // The statement of step 15's store, as it was written: its notices a JSON array of [channel, notice].
      await client.query(
        `SELECT baton_write_calls($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[],
           $7::bigint[], $8::int[], $9::text, $10::text[], $11::text[], $12::int[], $13::int[], $14::text,
           $15::jsonb, $16::jsonb, $17::jsonb, $18::jsonb, $19::jsonb, $20::text, $21::text[], $22::json,
           $23::text[], $24::boolean, $25::boolean)`,
        [
          ['c1'],
          ['s'],
          [record.toolName],
          [record.status],
          [null],
          [null],
          [record.createdAt],
          [record.attempt],
          JSON.stringify(record),
          ['c1'],
          ['s'],
          [1],
          [1],
          JSON.stringify([event('c1', 1)]),
          null,
          null,
          null,
          null,
          null,
          'previous',
          ['s'],
          JSON.stringify([[new Channels(schema).events, told]]),
          null,
          true,
          true,
        ],
      );
      expect(await heard).toEqual(told);
      expect(await store.getCall('c1')).toEqual(record);
      expect(await store.listEvents('c1')).toEqual([event('c1', 1)]);
    } finally {
      stop?.();
      await client.end();
      await store.close();
    }
  });
});

describe('the queue and the owners of calls', () => {
  it('are claimed by their keys once the tables have grown, by a claim planned while they were small', async () => {
    const schema = `claim_plans_${process.pid}`;
    const store = postgresStore({ connectionString: server.url, schema });
    const client = new pg.Client({ connectionString: server.url });
    await client.connect();
    try {
      await store.write({ calls: [makeCallRecord({ callId: 'c1', sessionId: 's' })], newCalls: ['c1'] });
      // Every plan of this session's statements, nested ones included, told to it as a notice.
      const plans: string[] = [];
      client.on('notice', (notice) => plans.push(notice.message ?? ''));
      await client.query(`SET search_path = ${schema}; ANALYZE calls; ANALYZE call_queue;
        LOAD 'auto_explain'; SET auto_explain.log_nested_statements = on; SET auto_explain.log_level = notice`);
      const claim = "SELECT claimed_record FROM baton_claim('worker', 50, NULL)";
      expect((await client.query(claim)).rows).toHaveLength(1);
      await client.query(
        `INSERT INTO calls (call_id, session_id, tool_name, status, record, created_at, attempt)
         SELECT 'g' || g, 's', 't', 'queued', '{}', 1, 0 FROM generate_series(1, 20000) AS g`,
      );
      // Plans told only from here: the 20,000 rows' triggers, each told, took seconds on a busy machine.
      await client.query('SET auto_explain.log_min_duration = 0');
      plans.length = 0;
      expect((await client.query(claim)).rows).toHaveLength(50);
      const claimPlans = plans.filter((plan) => plan.includes('Update on calls'));
      expect(claimPlans.length).toBeGreaterThan(0);
      expect(plans.filter((plan) => /Seq Scan on (calls|call_queue|call_owners)\b/.test(plan))).toEqual([]);
    } finally {
      await client.end();
      await store.close();
    }
  }, 30_000);

  it('index no column that a claim or an end changes, so that both are heap-only updates', async () => {
    const schema = `heap_only_${process.pid}`;
    await openOn(schema);
    const client = new pg.Client({ connectionString: server.url });
    await client.connect();
    try {
      // Every column an index of calls holds, in its key, an expression or its predicate.
      const { rows } = await client.query<{ index: string; columns: string[] }>(
        `SELECT i.indexrelid::regclass::text AS index,
                array(SELECT a.attname::text FROM pg_attribute AS a
                      WHERE a.attrelid = i.indrelid AND a.attnum > 0
                        AND (a.attnum = ANY(i.indkey)
                             OR pg_get_indexdef(i.indexrelid) ~ ('\\m' || a.attname || '\\M'))) AS columns
         FROM pg_index AS i WHERE i.indrelid = $1::regclass`,
        [`${schema}.calls`],
      );
      const changed = ['status', 'owner_id', 'ended_at', 'attempt', 'record'];
      expect(rows.length).toBeGreaterThan(3);
      for (const { index, columns } of rows) {
        expect(
          columns.filter((column) => changed.includes(column)),
          index,
        ).toEqual([]);
      }
    } finally {
      await client.end();
    }
  });

  it('follow the statements of a process of the previous version: a call its worker claimed is not claimed again, and is recovered once that worker is gone', async () => {
    const schema = `previous_claims_${process.pid}`;
    const store = postgresStore({ connectionString: server.url, schema });
    const client = new pg.Client({ connectionString: server.url });
    await client.connect();
    try {
      await store.write({
        calls: ['first', 'second', 'third'].map((callId) => makeCallRecord({ callId, sessionId: 's' })),
      });
      await client.query(`SET search_path = ${schema}`);
      // The claim of the previous version's store, as it was written.
      const previousClaim = await client.query<{ call_id: string }>(
        `UPDATE calls SET owner_id = $1 WHERE position IN (
           SELECT position FROM calls WHERE owner_id IS NULL AND status = 'queued'
             AND (record->>'approval') IS DISTINCT FROM 'pending'
           ORDER BY position LIMIT $2 FOR UPDATE SKIP LOCKED)
         RETURNING call_id`,
        ['previous-worker', 1],
      );
      expect(previousClaim.rows.map((row) => row.call_id)).toEqual(['first']);
      const claimed = await store.claimQueued('this-worker', 10);
      expect(claimed.map(({ record }) => record.callId)).toEqual(['second', 'third']);
      expect(await store.claimQueued('another-worker', 10)).toEqual([]);
      // And a row a person changes by hand: a call given back to the queue.
      await client.query("UPDATE calls SET owner_id = NULL WHERE call_id = 'third'");
      expect((await store.claimQueued('another-worker', 10)).map(({ record }) => record.callId)).toEqual([
        'third',
      ]);
      const recovered = await store.claimCalls(['previous-worker'], 'this-worker');
      expect(recovered.map((record) => [record.callId, record.ownerId])).toEqual([['first', 'this-worker']]);
      expect(await store.claimCalls(['previous-worker'], 'another-worker')).toEqual([]);
    } finally {
      await client.end();
      await store.close();
    }
  });

  it('hold a claimed call for its claimer even where a row of call_owners was left for it by hand', async () => {
    const schema = `owners_by_hand_${process.pid}`;
    const store = postgresStore({ connectionString: server.url, schema });
    const client = new pg.Client({ connectionString: server.url });
    await client.connect();
    try {
      await store.write({ calls: [makeCallRecord({ callId: 'c1', sessionId: 's' })], newCalls: ['c1'] });
      await client.query(
        `INSERT INTO ${schema}.call_owners (position, owner_id)
         SELECT position, 'stale' FROM ${schema}.calls WHERE call_id = 'c1'`,
      );
      expect((await store.claimQueued('worker', 10)).map(({ record }) => record.callId)).toEqual(['c1']);
      expect((await store.heldBy?.('worker'))?.map(({ record }) => record.callId)).toEqual(['c1']);
      expect(await store.claimCalls(['stale'], 'another')).toEqual([]);
    } finally {
      await client.end();
      await store.close();
    }
  });

  it('are made, as a store upgrades, from the calls it has: one that waits is claimed, one a process held is recovered', async () => {
    const schema = `queue_upgraded_${process.pid}`;
    const before = MIGRATIONS.findIndex((step) => step.includes('CREATE TABLE call_queue'));
    await schemaAtStep(schema, before, { rows: false });
    const client = new pg.Client({ connectionString: server.url });
    await client.connect();
    try {
      for (const record of [
        makeCallRecord({ callId: 'old', sessionId: 's' }),
        makeCallRecord({ callId: 'held', sessionId: 's', status: 'inline', ownerId: 'gone' }),
      ]) {
        await client.query(
          `INSERT INTO ${schema}.calls (call_id, session_id, tool_name, status, owner_id, record)
           VALUES ($1, $2, $3, $4, $5, $6)`,
          [
            record.callId,
            record.sessionId,
            record.toolName,
            record.status,
            record.ownerId,
            JSON.stringify(record),
          ],
        );
      }
    } finally {
      await client.end();
    }
    const store = postgresStore({ connectionString: server.url, schema });
    try {
      expect((await store.claimQueued('worker', 10)).map(({ record }) => record.callId)).toEqual(['old']);
      expect((await store.claimCalls(['gone'], 'worker')).map((record) => record.callId)).toEqual(['held']);
      // Retention finds the calls by their creation, read from the records at the upgrade.
      await store.write({
        calls: [
          makeCallRecord({
            callId: 'old',
            sessionId: 's',
            status: 'succeeded',
            endedAt: 1_500,
            ownerId: 'worker',
          }),
        ],
        writer: 'worker',
      });
      expect(await store.deleteEndedBefore(2_000)).toBe(1);
    } finally {
      await store.close();
    }
  });
});

describe('what a store finds in its schema at start', () => {
  async function sql(text: string): Promise<void> {
    const client = new pg.Client({ connectionString: server.url });
    await client.connect();
    try {
      await client.query(text);
    } finally {
      await client.end();
    }
  }

  /** The error a store's first use fails with, or undefined when it opens. */
  async function opening(schema: string, init = false): Promise<string | undefined> {
    const store = postgresStore({ connectionString: server.url, schema, init });
    try {
      await store.listCalls({ limit: 1 });
      return undefined;
    } catch (error) {
      return (error as Error).message;
    } finally {
      await store.close();
    }
  }

  it('refuses a store whose tables were dropped, and starts afresh there only with init', async () => {
    const schema = `emptied_${process.pid}_${Date.now()}`;
    const made = postgresStore({ connectionString: server.url, schema });
    await made.write({ calls: [makeCallRecord({ callId: 'kept', sessionId: 's' })] });
    await made.close();
    const tables = await tableNames(schema);
    await sql(tables.map((table) => `DROP TABLE IF EXISTS ${schema}.${table} CASCADE;`).join('\n'));

    expect(await opening(schema)).toBe(
      `the PostgreSQL schema ${schema} of database postgres exists and holds no Baton store (emptied?): restore it from a backup; to start afresh on purpose, start with --init (BATON_STORE_INIT=1)`,
    );
    expect(await opening(schema, true)).toBeUndefined();
    // Made afresh, it is a store like any other: the next start needs no init.
    expect(await opening(schema)).toBeUndefined();
  });

  it('refuses a store that lost its calls table but kept its versions', async () => {
    const schema = `lost_${process.pid}_${Date.now()}`;
    await postgresStore({ connectionString: server.url, schema }).close();
    await sql(`DROP TABLE ${schema}.calls CASCADE`);
    expect(await opening(schema)).toMatch(
      new RegExp(
        `^the PostgreSQL schema ${schema} of database postgres held a Baton store and has lost its tables \\(calls\\)`,
      ),
    );
    expect(await opening(schema, true)).toBeUndefined();
  });

  it("refuses another program's schema, even with init, and leaves its tables alone", async () => {
    const schema = `foreign_${process.pid}_${Date.now()}`;
    await sql(
      `CREATE SCHEMA ${schema}; CREATE TABLE ${schema}.orders (id int); INSERT INTO ${schema}.orders VALUES (7)`,
    );
    const refusal = `the PostgreSQL schema ${schema} of database postgres holds tables of another program (orders), not a Baton store: give the store another schema`;
    expect(await opening(schema)).toBe(refusal);
    expect(await opening(schema, true)).toBe(refusal);
    const client = new pg.Client({ connectionString: server.url });
    await client.connect();
    expect((await client.query(`SELECT id FROM ${schema}.orders`)).rows).toEqual([{ id: 7 }]);
    await client.end();
  });

  it('refuses a store a newer Baton wrote', async () => {
    const schema = `newer_${process.pid}_${Date.now()}`;
    await postgresStore({ connectionString: server.url, schema }).close();
    await sql(`INSERT INTO ${schema}.baton_schema (version) VALUES (${MIGRATIONS.length + 1})`);
    expect(await opening(schema)).toBe(
      `the PostgreSQL schema ${schema} of database postgres was written by a newer Baton (schema ${MIGRATIONS.length + 1}; this one knows ${MIGRATIONS.length}): run that version, or a newer one`,
    );
  });
});

async function tableNames(schema: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: server.url });
  await client.connect();
  try {
    const { rows } = await client.query<{ tablename: string }>(
      'SELECT tablename FROM pg_tables WHERE schemaname = $1',
      [schema],
    );
    return rows.map((row) => row.tablename);
  } finally {
    await client.end();
  }
}
