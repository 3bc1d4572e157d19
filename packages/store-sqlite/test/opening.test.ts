import {
  closeSync,
  existsSync,
  mkdtempSync,
  openSync,
  rmSync,
  statSync,
  truncateSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeCallRecord } from '@baton/store/testing';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { type SqliteStore, sqliteStore, storeFileProblem } from '../src/index.js';

const dir = mkdtempSync(join(tmpdir(), 'baton-sqlite-opening-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;

/** A store file with `calls` calls in it, closed. */
async function storeWith(calls: number): Promise<string> {
  const path = join(dir, `store-${files++}.db`);
  const store = sqliteStore({ path });
  await store.write({
    calls: Array.from({ length: calls }, (_, i) =>
      makeCallRecord({ callId: `c${i}`, args: { text: 'x'.repeat(2_000) } }),
    ),
  });
  await store.close();
  return path;
}

function openError(options: Parameters<typeof sqliteStore>[0]): { code?: string; message: string } {
  try {
    sqliteStore(options);
  } catch (error) {
    return error as { code?: string; message: string };
  }
  throw new Error('it opened');
}

describe('a SQLite store that cannot be trusted is refused at open, in one line that says what to do', () => {
  it('refuses a store that held data and is now an empty file, or gone; --init starts afresh on purpose', async () => {
    const emptied = await storeWith(3);
    for (const suffix of ['', '-wal', '-shm']) rmSync(`${emptied}${suffix}`, { force: true });
    writeFileSync(emptied, '');
    expect(openError({ path: emptied })).toMatchObject({
      code: 'persistence_failed',
      message: `the SQLite store ${emptied} held a Baton store and is now empty (0 bytes): restore it from a backup; to start afresh on purpose, start with --init (BATON_STORE_INIT=1)`,
    });
    const deleted = await storeWith(1);
    rmSync(deleted);
    expect(openError({ path: deleted }).message).toContain('held a Baton store and is now missing');
    const fresh = sqliteStore({ path: deleted, init: true });
    expect((await fresh.listCalls()).calls).toEqual([]);
    await fresh.close();
    // Once started afresh, it opens as usual.
    await sqliteStore({ path: deleted }).close();
  });

  it('refuses a file that is not SQLite, a truncated one, and garbage pages in the middle', async () => {
    const text = join(dir, 'notes.txt');
    writeFileSync(text, 'these are my notes, not a database\n'.repeat(200));
    expect(openError({ path: text })).toMatchObject({
      code: 'persistence_failed',
      message: `the SQLite store ${text} is not a SQLite database (another kind of file, or damaged): restore it from a backup, or move it away to start afresh`,
    });

    const truncated = await storeWith(200);
    truncateSync(truncated, 8_192);
    expect(openError({ path: truncated }).message).toMatch(/^the SQLite store .* is damaged \(/);

    const garbled = await storeWith(400);
    const fd = openSync(garbled, 'r+');
    writeSync(fd, Buffer.alloc(16_384, 0xa5), 0, 16_384, 40_960);
    closeSync(fd);
    expect(openError({ path: garbled }).message).toMatch(/^the SQLite store .* is damaged \(/);
  });

  it("refuses another program's database and one from a newer Baton, and leaves both as they were", async () => {
    const other = join(dir, 'other.db');
    const db = new Database(other);
    db.exec('CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)');
    db.close();
    expect(openError({ path: other }).message).toBe(
      `the SQLite store ${other} is a SQLite database, but not a Baton store: point the store at another file`,
    );
    const reopened = new Database(other);
    expect(reopened.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all()).toEqual([
      { name: 'customers' },
    ]);
    reopened.close();
    expect(existsSync(`${other}.baton`)).toBe(false);

    const newer = await storeWith(1);
    const raw = new Database(newer);
    raw.pragma('user_version = 999');
    raw.close();
    expect(openError({ path: newer }).message).toMatch(
      /was written by a newer Baton \(schema 999; this one knows \d+\)/,
    );
  });

  it('refuses a file in a directory that does not exist, saying so', () => {
    const path = join(dir, 'no-such-directory', 'baton.db');
    expect(openError({ path })).toMatchObject({
      code: 'persistence_failed',
      message: `the SQLite store ${path} cannot be opened: check that its directory exists and that this process may write there`,
    });
  });

  it('checks the whole file on demand (integrity_check): none on a sound one', async () => {
    const path = await storeWith(10);
    const store = sqliteStore({ path }) as SqliteStore;
    expect(await store.integrityCheck()).toEqual([]);
    await store.close();
  });
});

describe('storeFileProblem: whether a file is a Baton store, read without changing it', () => {
  it("tells an empty file, another kind of file and another program's SQLite database from a store", async () => {
    const empty = join(dir, 'empty.db');
    writeFileSync(empty, '');
    const text = join(dir, 'text.db');
    writeFileSync(text, 'not a database\n');
    const foreign = join(dir, 'foreign.db');
    const other = new Database(foreign);
    other.exec('CREATE TABLE notes (body TEXT)');
    other.close();
    const sizes = [empty, text, foreign].map((path) => statSync(path).size);
    expect(storeFileProblem(empty)).toBe('an empty file, not a store');
    expect(storeFileProblem(text)).toBe('not a SQLite database');
    expect(storeFileProblem(foreign)).toBe('a SQLite database, but not a Baton store (no Baton schema)');
    expect(storeFileProblem(await storeWith(1))).toBeUndefined();
    // Nothing was changed: no schema was added, nothing was written.
    expect([empty, text, foreign].map((path) => statSync(path).size)).toEqual(sizes);
  });
});
