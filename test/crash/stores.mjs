// Where a crash-test process keeps its calls: a SQLite file, or a PostgreSQL schema
// (`postgres://…#schema`), the same for the process that dies and the one that recovers.
import { postgresStore } from '@baton/store-postgres';
import { sqliteStore } from '@baton/store-sqlite';

export function openStore(location) {
  if (!location.startsWith('postgres://')) return sqliteStore({ path: location });
  const [connectionString, schema] = location.split('#');
  return postgresStore({ connectionString, schema });
}
