import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeCallRecord } from '@baton/store/testing';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresStore } from '../src/index.js';
import { MIGRATIONS } from '../src/migrations.js';
import { type ThrowawayPostgres, throwawayPostgres } from '../src/testing.js';

let server: ThrowawayPostgres;
beforeAll(async () => {
  server = await throwawayPostgres();
}, 60_000);
afterAll(() => server.stop());

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

  it('follow the rows a person changes by hand: a call given an owner is not claimed again, and is recovered once that owner is gone', async () => {
    const schema = `claims_by_hand_${process.pid}`;
    const store = postgresStore({ connectionString: server.url, schema });
    const client = new pg.Client({ connectionString: server.url });
    await client.connect();
    try {
      await store.write({
        calls: ['first', 'second', 'third'].map((callId) => makeCallRecord({ callId, sessionId: 's' })),
      });
      await client.query(`SET search_path = ${schema}`);
      // A claim made by hand, by a statement that keeps neither the queue nor the owners itself.
      const claimByHand = await client.query<{ call_id: string }>(
        `UPDATE calls SET owner_id = $1 WHERE position IN (
           SELECT position FROM calls WHERE owner_id IS NULL AND status = 'queued'
             AND (record->>'approval') IS DISTINCT FROM 'pending'
           ORDER BY position LIMIT $2 FOR UPDATE SKIP LOCKED)
         RETURNING call_id`,
        ['worker-by-hand', 1],
      );
      expect(claimByHand.rows.map((row) => row.call_id)).toEqual(['first']);
      const claimed = await store.claimQueued('this-worker', 10);
      expect(claimed.map(({ record }) => record.callId)).toEqual(['second', 'third']);
      expect(await store.claimQueued('another-worker', 10)).toEqual([]);
      // And a row a person changes by hand: a call given back to the queue.
      await client.query("UPDATE calls SET owner_id = NULL WHERE call_id = 'third'");
      expect((await store.claimQueued('another-worker', 10)).map(({ record }) => record.callId)).toEqual([
        'third',
      ]);
      const recovered = await store.claimCalls(['worker-by-hand'], 'this-worker');
      expect(recovered.map((record) => [record.callId, record.ownerId])).toEqual([['first', 'this-worker']]);
      expect(await store.claimCalls(['worker-by-hand'], 'another-worker')).toEqual([]);
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
