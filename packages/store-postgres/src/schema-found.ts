import type pg from 'pg';
import { MIGRATIONS } from './migrations.js';

/**
 * What a store finds in its schema at start:
 * - `absent`: no such schema; it is made (a first start);
 * - `store`: Baton's, at some step; the missing steps are run;
 * - `emptied`: the schema is there but holds no store (its tables were dropped, or it was made
 *   empty for Baton): refused unless the store starts afresh on purpose (`init`), so that an
 *   emptied store is not silently replaced;
 * - `refused`: another program's tables, or a store a newer Baton wrote.
 */
export type SchemaFound =
  | { kind: 'absent' | 'store' }
  | { kind: 'emptied'; message: string }
  | { kind: 'refused'; message: string };

/** Tables every Baton store has had since its first step: without them a store lost its data. */
const FIRST_TABLES = ['calls', 'instances'];

export async function schemaFound(client: pg.PoolClient, schema: string): Promise<SchemaFound> {
  const { rows } = await client.query<{ exists: boolean; tables: string[] }>(
    `SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1) AS exists,
       coalesce((SELECT array_agg(c.relname::text) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                  WHERE n.nspname = $1 AND c.relkind IN ('r', 'p', 'v', 'm')), '{}') AS tables`,
    [schema],
  );
  const { exists, tables } = rows[0] ?? { exists: false, tables: [] };
  if (!exists) return { kind: 'absent' };
  const where = `the PostgreSQL schema ${schema} of database ${client.database ?? '(default)'}`;
  if (!tables.includes('baton_schema')) {
    if (tables.length > 0) {
      return {
        kind: 'refused',
        message: `${where} holds tables of another program (${tables.slice(0, 3).join(', ')}${tables.length > 3 ? ', …' : ''}), not a Baton store: give the store another schema`,
      };
    }
    return {
      kind: 'emptied',
      message: `${where} exists and holds no Baton store (emptied?): restore it from a backup; to start afresh on purpose, start with --init (BATON_STORE_INIT=1)`,
    };
  }
  const version = await client.query<{ version: number }>(
    `SELECT coalesce(max(version), 0) AS version FROM ${schema}.baton_schema`,
  );
  const step = version.rows[0]?.version ?? 0;
  if (step > MIGRATIONS.length) {
    return {
      kind: 'refused',
      message: `${where} was written by a newer Baton (schema ${step}; this one knows ${MIGRATIONS.length}): run that version, or a newer one`,
    };
  }
  const missing = FIRST_TABLES.filter((table) => !tables.includes(table));
  if (step > 0 && missing.length > 0) {
    return {
      kind: 'emptied',
      message: `${where} held a Baton store and has lost its tables (${missing.join(', ')}): restore it from a backup; to start afresh on purpose, start with --init (BATON_STORE_INIT=1)`,
    };
  }
  return { kind: 'store' };
}
