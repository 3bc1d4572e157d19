import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeCallRecord } from '@baton/store/testing';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { MIGRATIONS, sqliteStore } from '../src/index.js';

const dir = mkdtempSync(join(tmpdir(), 'baton-sqlite-reopen-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const SNAPSHOT = join(import.meta.dirname, '..', 'schema.sql');

describe('a SQLite file across opens', () => {
  it('is migrated once to the latest version, in WAL mode, and keeps what was written', async () => {
    const path = join(dir, 'baton.db');
    const first = sqliteStore({ path });
    await first.write({ calls: [makeCallRecord({ callId: 'c1', status: 'succeeded', endedAt: 5 })] });
    await first.close();
    const second = sqliteStore({ path });
    expect((await second.getCall('c1'))?.status).toBe('succeeded');
    await second.close();
    const raw = new Database(path, { readonly: true });
    expect(raw.pragma('user_version', { simple: true })).toBe(MIGRATIONS.length);
    expect(raw.pragma('journal_mode', { simple: true })).toBe('wal');
    raw.close();
  });

  it('lists by tool through an index: asking for a tool no call has reads no call', async () => {
    const path = join(dir, 'by-tool.db');
    const store = sqliteStore({ path });
    await store.write({ calls: [makeCallRecord({ callId: 'c1' })] });
    await store.close();
    const raw = new Database(path, { readonly: true });
    const plan = raw
      .prepare(
        'EXPLAIN QUERY PLAN SELECT position, record, owner_id FROM calls WHERE tool_name = ? ORDER BY position DESC LIMIT 101',
      )
      .all('nothing') as Array<{ detail: string }>;
    raw.close();
    expect(plan.map((step) => step.detail).join('\n')).toMatch(/USING (COVERING )?INDEX calls_by_tool/);
  });

  it('has, new, the checked-in schema.sql (BATON_UPDATE_SCHEMA=1 writes it)', async () => {
    const path = join(dir, 'schema.db');
    await sqliteStore({ path }).close();
    const raw = new Database(path, { readonly: true });
    const made = (
      raw
        .prepare('SELECT sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY type DESC, name')
        .pluck()
        .all() as string[]
    )
      // As the steps wrote it, less the indentation of the template it was written in.
      .map((sql) => `${sql.replace(/^ {2}/gm, '')};\n`)
      .join('\n');
    raw.close();
    if (process.env.BATON_UPDATE_SCHEMA === '1') writeFileSync(SNAPSHOT, made);
    expect(made).toBe(readFileSync(SNAPSHOT, 'utf8'));
  });
});
