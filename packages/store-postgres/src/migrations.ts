import { readdirSync, readFileSync } from 'node:fs';

/** Where the schema's steps are: `sql/000001.sql`, `sql/000002.sql`... beside `src/` and `dist/`. */
const STEPS = new URL('../sql/', import.meta.url);

/**
 * The schema, as numbered SQL files (`sql/NNNNNN.sql`); `baton_schema` records the steps applied.
 * Opening a store runs the missing steps in one transaction under an advisory lock, so processes
 * that start at once migrate the database once. Only ever add a step; `sql/schema.sql` is the
 * schema they make, which a test compares with a fresh database.
 */
export const MIGRATIONS: readonly string[] = readdirSync(STEPS)
  .filter((name) => /^\d{6}\.sql$/.test(name))
  .sort()
  .map((name) => readFileSync(new URL(name, STEPS), 'utf8'));
