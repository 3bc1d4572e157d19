import { closeSync, openSync, readSync, statSync } from 'node:fs';
import Database from 'better-sqlite3';

/** The first bytes of every SQLite database file. */
const SQLITE_HEADER = 'SQLite format 3\0';

/**
 * Why the file at `path` is not a Baton store, read without changing it (opening it as a store
 * would make one of an empty file, and add Baton's tables to another program's database), or
 * undefined when it is one.
 */
export function storeFileProblem(path: string): string | undefined {
  if (statSync(path).size === 0) return 'an empty file, not a store';
  const header = Buffer.alloc(SQLITE_HEADER.length);
  const fd = openSync(path, 'r');
  try {
    readSync(fd, header, 0, header.length, 0);
  } finally {
    closeSync(fd);
  }
  if (header.toString('latin1') !== SQLITE_HEADER) return 'not a SQLite database';
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    const calls = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'calls'").get();
    const version = db.pragma('user_version', { simple: true }) as number;
    return calls === undefined || version === 0
      ? 'a SQLite database, but not a Baton store (no Baton schema)'
      : undefined;
  } finally {
    db.close();
  }
}
