import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CallEvent, CallRecord } from '@baton/contracts';
import { makeCallRecord } from '@baton/store/testing';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { sqliteStore } from '../src/index.js';

const dir = mkdtempSync(join(tmpdir(), 'baton-sqlite-writer-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const nextPath = () => join(dir, `store-${files++}.db`);

function records(count: number, prefix = 'c'): CallRecord[] {
  return Array.from({ length: count }, (_, i) =>
    makeCallRecord({ callId: `${prefix}${i}`, args: { text: 'x'.repeat(200) } }),
  );
}

/** What the runtime writes of calls that ran in one tick: each its record and three events. */
function oneTickCalls(count: number, prefix: string): { calls: CallRecord[]; events: CallEvent[] } {
  const calls = records(count, prefix);
  const events = calls.flatMap(({ callId, sessionId, toolName }) =>
    [1, 2, 3].map(
      (seq): CallEvent => ({ type: 'status', callId, sessionId, toolName, seq, at: seq, text: 'x' }),
    ),
  );
  return { calls, events };
}

/** Which settles first: the write, or a turn of the event loop begun once it was asked for. */
async function firstToSettle(write: Promise<unknown>): Promise<'write' | 'event loop'> {
  return Promise.race([
    write.then(() => 'write' as const),
    new Promise<'event loop'>((resolve) => setImmediate(() => resolve('event loop'))),
  ]);
}

describe('the writer thread of a SQLite store', () => {
  it('commits a batch while the event loop goes on, and a read after the write sees it', async () => {
    const store = sqliteStore({ path: nextPath(), synchronous: 'full' });
    const write = store.write({ calls: records(5_000) });
    expect(await firstToSettle(write)).toBe('event loop');
    await write;
    expect((await store.getCall('c4999'))?.args).toEqual({ text: 'x'.repeat(200) });
    await store.close();

    // On the caller's thread, the same batch holds the event loop until it is committed.
    const inline = sqliteStore({ path: nextPath(), synchronous: 'full', writerThread: false });
    expect(await firstToSettle(inline.write({ calls: records(5_000) }))).toBe('write');
    await inline.close();
  });

  it('makes the changes in the order they were asked for, small ones behind a batch out, and close waits for them', async () => {
    const path = nextPath();
    const store = sqliteStore({ path });
    const asked = [
      // A batch for the thread, then small changes that must not overtake it.
      store.write({ calls: [...records(2_000), makeCallRecord({ callId: 'c1', status: 'inline' })] }),
      store.write({ calls: [makeCallRecord({ callId: 'c1', status: 'succeeded', endedAt: 5 })] }),
      store.registerInstance({
        id: 'i1',
        host: 'h',
        pid: 1,
        boot: 'b',
        startedAt: 1,
        heartbeatAt: 1,
        leaseMs: 1_000,
        protocol: 2,
      }),
      store.heartbeat('i1', 42),
    ];
    // Closed twice at once, as a runtime and its owner may.
    await Promise.all([store.close(), store.close()]);
    expect(await Promise.all(asked)).toEqual([undefined, undefined, undefined, true]);
    await expect(store.heartbeat('i1', 43)).rejects.toMatchObject({
      code: 'persistence_failed',
      message: 'the SQLite store is closed',
    });
    const reopened = sqliteStore({ path });
    expect((await reopened.getCall('c1'))?.status).toBe('succeeded');
    expect((await reopened.listInstances()).map((instance) => instance.heartbeatAt)).toEqual([42]);
    await reopened.close();
  });

  it("makes a lone call's change at once when nothing is out: no hop to the thread and back", async () => {
    const store = sqliteStore({ path: nextPath() });
    expect(await firstToSettle(store.write({ calls: records(1) }))).toBe('write');
    expect(await firstToSettle(store.heartbeat('i1', 1))).toBe('write');
    // Behind a batch that is out, the same change waits its turn on the thread.
    const batch = store.write({ calls: records(2_000, 'b') });
    expect(await firstToSettle(store.write({ calls: records(1, 'after') }))).toBe('event loop');
    await batch;
    await store.close();
  });

  it('sends a batch of the size it asks the runtime for to the thread, even with nothing out', async () => {
    const store = sqliteStore({ path: nextPath() });
    const full = store.write(oneTickCalls(store.writeBatchCalls ?? 0, 'full'));
    expect(await firstToSettle(full)).toBe('event loop');
    await full;
    // A batch of a fifth of that is small: the hop would cost more than its commit.
    expect(await firstToSettle(store.write(oneTickCalls((store.writeBatchCalls ?? 0) / 5, 'fifth')))).toBe(
      'write',
    );
    await store.close();
  });

  it("fails a batch SQLite refuses with persistence_failed and SQLite's message, and writes the next", async () => {
    const store = sqliteStore({ path: nextPath() });
    const event = {
      type: 'queued',
      mode: 'inline',
      to: 'queued',
      callId: 'c1',
      sessionId: 's1',
      toolName: 'echo',
      seq: 1,
      at: 1,
    } as const;
    await store.write({ calls: [makeCallRecord({ callId: 'c1' })], events: [event] });
    // Another event under a seq the call has.
    await expect(store.write({ events: [{ ...event, at: 2 }] })).rejects.toMatchObject({
      code: 'persistence_failed',
      message: expect.stringContaining('UNIQUE constraint failed'),
    });
    await store.write({ calls: [makeCallRecord({ callId: 'c2' })] });
    expect((await store.listCalls()).calls.map((call) => call.callId)).toEqual(['c2', 'c1']);
    await store.close();
  });

  it('starts while another process holds the write lock, and writes once it is let go', async () => {
    const path = nextPath();
    await sqliteStore({ path }).close();
    const store = sqliteStore({ path, busyTimeoutMs: 50 });
    // Taken before the thread has started: its connection opens while another holds the lock.
    const other = new Database(path);
    other.exec('BEGIN IMMEDIATE');
    await expect(store.write({ calls: records(2_000) })).rejects.toMatchObject({
      code: 'persistence_failed',
      message: 'database is locked',
    });
    other.exec('COMMIT');
    other.close();
    await store.write({ calls: records(2_000) });
    expect((await store.listCalls({ limit: 5_000 })).calls).toHaveLength(2_000);
    await store.close();
  });

  it('fails every change sent to a thread that could not open the file, saying why', async () => {
    const gone = mkdtempSync(join(tmpdir(), 'baton-sqlite-gone-'));
    const path = join(gone, 'baton.db');
    const store = sqliteStore({ path });
    // Removed before the thread has started: the store's own connection keeps the unlinked file.
    rmSync(gone, { recursive: true, force: true });
    const failure = {
      code: 'persistence_failed',
      message: expect.stringMatching(
        /^the SQLite store's writer thread stopped: the SQLite store \S+ cannot be opened: check that its directory exists/,
      ),
    };
    await expect(store.write({ calls: records(2_000) })).rejects.toMatchObject(failure);
    // Idle no more: even a small change goes to the thread, and fails the same way.
    await expect(store.heartbeat('i1', 1)).rejects.toMatchObject(failure);
    await store.close();
  });

  it('lets a process that never closes its store exit, once what it asked to write is committed', async () => {
    const fixture = join(import.meta.dirname, 'fixtures', 'write-and-leave.mjs');
    for (const how of ['open', 'await', 'leave']) {
      const path = nextPath();
      const child = spawnSync(process.execPath, [fixture, path, how], { timeout: 20_000, encoding: 'utf8' });
      expect({ how, status: child.status, stderr: child.stderr }).toEqual({ how, status: 0, stderr: '' });
      const reopened = sqliteStore({ path, writerThread: false });
      expect({ how, calls: (await reopened.listCalls({ limit: 5_000 })).calls.length }).toEqual({
        how,
        calls: how === 'open' ? 0 : 2_000,
      });
      await reopened.close();
    }
  });
});
