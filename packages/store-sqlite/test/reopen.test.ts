import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CallEvent } from '@baton/contracts';
import { makeCallRecord, statusEvent } from '@baton/store/testing';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { MIGRATIONS, sqliteStore } from '../src/index.js';

const dir = mkdtempSync(join(tmpdir(), 'baton-sqlite-reopen-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const event = (callId: string, seq: number) => statusEvent(callId, seq, 's');

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

  it('keeps the events of a file of step 7, where they were, and serves a process of that version while this one runs', async () => {
    const path = join(dir, 'step-7.db');
    // A store of the previous version: its schema, its statements, and the events it wrote.
    const previous = new Database(path);
    previous.pragma('journal_mode = WAL');
    for (const step of MIGRATIONS.slice(0, 7)) previous.exec(step as string);
    previous.pragma('user_version = 7');
    const insertCall = previous.prepare(
      'INSERT INTO calls (call_id, session_id, tool_name, status, record) VALUES (?, ?, ?, ?, ?)',
    );
    const insertEvent = previous.prepare('INSERT INTO events (call_id, seq, event) VALUES (?, ?, ?)');
    const sessionEvents = previous.prepare(`
      SELECT e.position, e.event FROM calls c JOIN events e ON e.call_id = c.call_id
      WHERE c.session_id = ? AND e.position > ? ORDER BY e.position`);
    const lastSeq = previous.prepare('SELECT coalesce(max(seq), 0) FROM events WHERE call_id = ?').pluck();
    const record = makeCallRecord({ callId: 'old', sessionId: 's' });
    insertCall.run('old', 's', 'echo', 'queued', JSON.stringify(record));
    for (const seq of [1, 2]) insertEvent.run('old', seq, JSON.stringify(event('old', seq)));

    const store = sqliteStore({ path });
    expect(await store.listSessionEvents('s')).toEqual([
      { position: 1, event: event('old', 1) },
      { position: 2, event: event('old', 2) },
    ]);
    await store.write({
      calls: [makeCallRecord({ callId: 'new', sessionId: 's' })],
      events: [event('new', 1), event('old', 3), event('new', 2)],
    });
    // The previous version writes on, through its own connection, as it did.
    insertEvent.run('old', 4, JSON.stringify(event('old', 4)));
    const session = await store.listSessionEvents('s');
    expect(session.map(({ event: { callId, seq } }) => `${callId}${seq}`)).toEqual([
      'old1',
      'old2',
      'new1',
      'new2',
      'old3',
      'old4',
    ]);
    expect(await store.listEvents('old')).toEqual([1, 2, 3, 4].map((seq) => event('old', seq)));
    // And reads them as it did: one a row, at the positions this version gives them.
    const read = (sessionEvents.all('s', 0) as Array<{ position: number; event: string }>).map((row) => ({
      position: row.position,
      event: JSON.parse(row.event) as CallEvent,
    }));
    expect(read).toEqual(session);
    expect(lastSeq.get('old')).toBe(4);
    // Its retention sweep removes a call's events by call_id.
    previous.prepare('DELETE FROM events WHERE call_id IN (?)').run('new');
    expect(await store.listEvents('new')).toEqual([]);
    expect(await store.listEvents('old')).toHaveLength(4);
    previous.close();
    await store.close();
  });
});
