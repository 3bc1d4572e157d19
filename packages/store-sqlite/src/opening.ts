import { existsSync, statSync, writeFileSync } from 'node:fs';
import { BatonError, isBatonError } from '@baton/contracts';
import Database from 'better-sqlite3';
import { MIGRATIONS } from './migrations.js';

export interface OpeningOptions {
  path: string;
  synchronous?: 'normal' | 'full';
  busyTimeoutMs?: number;
  /**
   * Start afresh on purpose where a Baton store used to be (its file is gone or empty). Without it
   * such a store is refused: a deleted or emptied database is not silently replaced.
   */
  init?: boolean;
  /** `quick` (default): `PRAGMA quick_check` at open; `none`: skip it. */
  check?: 'quick' | 'none';
  /**
   * False for a second connection to a file the store opened already (its writer thread's): the
   * schema is known to be current, and the migration's write lock, which another process may
   * hold for a while, is not taken.
   */
  migrate?: boolean;
}

/** The marker beside a database that says a Baton store was made there. */
export function markerOf(path: string): string {
  return `${path}.baton`;
}

/** One clear line: the file, what is wrong, and what to do. */
function unusable(path: string, what: string, todo: string, cause?: unknown): BatonError {
  return new BatonError('persistence_failed', `the SQLite store ${path} ${what}: ${todo}`, { cause });
}

const ON_BACKUP = 'restore it from a backup, or move it away to start afresh';

/** A SQLite error as one line that names the file and what to do. */
function describe(error: unknown, path: string): BatonError {
  const code = (error as { code?: string }).code ?? '';
  const message = (error as Error).message ?? String(error);
  if (code === 'SQLITE_NOTADB')
    return unusable(path, 'is not a SQLite database (another kind of file, or damaged)', ON_BACKUP, error);
  if (code.startsWith('SQLITE_CORRUPT')) return unusable(path, `is damaged (${message})`, ON_BACKUP, error);
  if (code.startsWith('SQLITE_READONLY') || code === 'SQLITE_PERM') {
    return unusable(
      path,
      'cannot be written',
      'make the file, its directory and its -wal and -shm files writable by this process',
      error,
    );
  }
  // better-sqlite3 checks the directory itself, before SQLite, and throws without a code.
  if (code.startsWith('SQLITE_CANTOPEN') || /directory does not exist/.test(message)) {
    return unusable(
      path,
      'cannot be opened',
      'check that its directory exists and that this process may write there',
      error,
    );
  }
  if (code === 'SQLITE_FULL')
    return unusable(path, 'cannot grow: the disk is full', 'free some space, then start again', error);
  return unusable(path, `cannot be opened (${code || 'error'}: ${message})`, ON_BACKUP, error);
}

/** Tables a Baton store has had since its first step, to tell it from another program's database. */
function isBatonSchema(db: Database.Database): boolean {
  const row = db
    .prepare(
      "SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name IN ('calls', 'event_rows', 'instances')",
    )
    .get() as { n: number };
  return row.n === 3;
}

function hasTables(db: Database.Database): boolean {
  return (
    (db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE type = 'table'").get() as { n: number }).n > 0
  );
}

function migrate(db: Database.Database, path: string): void {
  db.transaction(() => {
    const version = db.pragma('user_version', { simple: true }) as number;
    if (version > MIGRATIONS.length) {
      throw unusable(
        path,
        `was written by a newer Baton (schema ${version}; this one knows ${MIGRATIONS.length})`,
        'run that version, or a newer one',
      );
    }
    if (version === 0 ? hasTables(db) : !isBatonSchema(db)) {
      throw unusable(path, 'is a SQLite database, but not a Baton store', 'point the store at another file');
    }
    for (let step = version; step < MIGRATIONS.length; step++) db.exec(MIGRATIONS[step] as string);
    db.pragma(`user_version = ${MIGRATIONS.length}`);
  }).immediate();
}

/**
 * Opens a Baton store's database, or refuses with one line that says what is wrong and what to do:
 * a file that is not SQLite, or is damaged (`quick_check`), or cannot be written, a database of
 * another program or of a newer Baton, and a store that once was here and is now empty or gone.
 */
export function openDatabase(options: OpeningOptions): Database.Database {
  const { path } = options;
  const onDisk = path !== ':memory:' && path !== '';
  if (onDisk && !options.init && existsSync(markerOf(path))) {
    const size = existsSync(path) ? statSync(path).size : -1;
    if (size <= 0) {
      throw unusable(
        path,
        `held a Baton store and is now ${size === 0 ? 'empty (0 bytes)' : 'missing'}`,
        'restore it from a backup; to start afresh on purpose, start with --init (BATON_STORE_INIT=1)',
      );
    }
  }
  let db: Database.Database | undefined;
  try {
    db = new Database(path);
    db.pragma('journal_mode = WAL');
    db.pragma(`synchronous = ${options.synchronous === 'full' ? 'FULL' : 'NORMAL'}`);
    db.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 5_000}`);
    if (options.check !== 'none') {
      const problems = (db.pragma('quick_check') as Array<{ quick_check: string }>).map(
        (row) => row.quick_check,
      );
      if (problems[0] !== 'ok')
        throw unusable(path, `is damaged (quick_check: ${problems.slice(0, 3).join('; ')})`, ON_BACKUP);
    }
    if (options.migrate !== false) migrate(db, path);
  } catch (error) {
    db?.close();
    throw isBatonError(error) ? error : describe(error, path);
  }
  if (onDisk && (options.init || !existsSync(markerOf(path)))) {
    writeFileSync(
      markerOf(path),
      `${JSON.stringify({ baton: 'store', schema: MIGRATIONS.length, createdAt: new Date().toISOString() })}\n`,
    );
  }
  return db;
}

/** `PRAGMA integrity_check`: every problem SQLite finds in the file (an empty list when it is sound). */
export function integrityProblems(db: Database.Database): string[] {
  const rows = db.pragma('integrity_check') as Array<{ integrity_check: string }>;
  const problems = rows.map((row) => row.integrity_check);
  return problems.length === 1 && problems[0] === 'ok' ? [] : problems;
}
