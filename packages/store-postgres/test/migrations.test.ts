import type { CallEvent } from '@baton/contracts';
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
async function schemaAtStep(schema: string, steps: number): Promise<void> {
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

describe('PostgreSQL migrations on a database of an earlier version', () => {
  it('identifies events by (call, seq) alone from step 7: the events kept, read and numbered as before, a repeat refused', async () => {
    const schema = `before_step_7_${process.pid}`;
    await schemaAtStep(schema, 6);
    const store = postgresStore({ connectionString: server.url, schema });
    try {
      expect(await store.listEvents('old')).toEqual([event('old', 1), event('old', 2)]);
      await store.write({ events: [event('old', 3)] });
      const session = await store.listSessionEvents('s');
      expect(session.map(({ event: { seq } }) => seq)).toEqual([1, 2, 3]);
      expect(session[2]?.position).toBeGreaterThan(session[1]?.position ?? Number.POSITIVE_INFINITY);
      await expect(store.write({ events: [event('old', 2)] })).rejects.toThrow();
      const client = new pg.Client({ connectionString: server.url });
      await client.connect();
      const { rows } = await client.query(
        `SELECT indexdef FROM pg_indexes WHERE schemaname = $1 AND tablename = 'events' ORDER BY indexname`,
        [schema],
      );
      const identity = await client.query(`SELECT relreplident FROM pg_class WHERE oid = $1::regclass`, [
        `${schema}.events`,
      ]);
      await client.end();
      expect(identity.rows).toEqual([{ relreplident: 'i' }]);
      // Two indexes: the call's (call_id, seq) and the session's; none of the position alone.
      expect(rows.map(({ indexdef }) => (indexdef as string).replace(/^.* USING btree /, ''))).toEqual([
        '(session_id, "position")',
        '(call_id, seq)',
      ]);
    } finally {
      await store.close();
    }
  });
});
