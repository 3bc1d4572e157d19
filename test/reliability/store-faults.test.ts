import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isTerminalStatus } from '@baton/contracts';
import { throwawayPostgres } from '@baton/store-postgres/testing';
import { sqliteStore } from '@baton/store-sqlite';
import { MAIN, type ServerProcess, startServer } from '@baton/test-support';
import { afterEach, describe, expect, it } from 'vitest';

/**
 * The store fails under a running server: its disk fills up. A full disk is an outage, ridden out
 * for `storeRetryMs`: calls wait, and every accepted call ends once, its caller told once; past the
 * ride-out, a call that was not kept is told so, leaves nothing, and its id can be used again. A
 * PostgreSQL outage under load fails nothing. A store on a read-only file system stops the start
 * with one line. (A file system cannot be turned read-only under a running
 * server: Linux refuses while the database is open for writing, and open files stay writable.)
 *
 * The server runs in a mount namespace of its own, on a small tmpfs that goes away with it; the
 * test reaches into that namespace with nsenter to make and clear the fault.
 */

let server: ServerProcess | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

/** Runs a shell command in the server's mount namespace (`$DIR` is its data directory). */
function inServerNamespace(running: ServerProcess, script: string): void {
  execFileSync('nsenter', ['--target', String(running.child.pid), '--mount', '--', 'sh', '-c', script], {
    env: { ...process.env, DIR: running.dir },
    stdio: 'ignore',
  });
}

interface Reply {
  /** The HTTP status it came with. */
  http: number;
  callId: string;
  status?: string;
  error?: { code: string; message: string };
  /** How long its request took. */
  ms?: number;
}

async function call(address: string, body: object): Promise<Reply> {
  const response = await fetch(`${address}/v1/calls`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    // A call that hangs fails the test here.
    signal: AbortSignal.timeout(30_000),
  });
  return { http: response.status, ...((await response.json()) as Omit<Reply, 'http'>) };
}

async function statusOf(address: string, callId: string): Promise<string> {
  const response = await fetch(`${address}/v1/calls/${encodeURIComponent(callId)}`, {
    signal: AbortSignal.timeout(10_000),
  });
  return ((await response.json()) as { status: string }).status;
}

/** Waits (real time: a real process and a real disk) until every call has ended; at most 30 s. */
async function allEnded(address: string, callIds: readonly string[]): Promise<Record<string, string>> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const statuses = Object.fromEntries(
      await Promise.all(callIds.map(async (id) => [id, await statusOf(address, id)])),
    );
    if (
      Object.values(statuses).every((status) => isTerminalStatus(status as never)) ||
      Date.now() > deadline
    ) {
      return statuses;
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** A disk that fills up under the server: its tmpfs, filled and freed from inside its namespace. */
const FILL = 'head -c 64m /dev/zero > "$DIR/filler" || true';
const FREE = 'rm -f "$DIR/filler"';

/** Large calls, one after another until one is refused or `stop` says so: each needs room on the disk. */
async function largeCalls(address: string, stop: { done: boolean }, prefix: string): Promise<Reply[]> {
  const replies: Reply[] = [];
  for (let i = 0; i < 100 && !stop.done; i++) {
    const callId = `${prefix}-${i}`;
    const sent = Date.now();
    const reply = await call(address, {
      name: 'echo',
      args: { text: `${i} ${'x'.repeat(400_000)}` },
      sessionId: 'big',
      callId,
    });
    // A refusal names its call in its error.
    replies.push({ ...reply, callId, ms: Date.now() - sent });
    if (reply.status !== 'succeeded') break;
  }
  return replies;
}

/** The server's store as it is now, copied out of its namespace and opened here. */
async function storeOf(running: ServerProcess) {
  const copy = mkdtempSync(join(tmpdir(), 'baton-full-disk-copy-'));
  execFileSync(
    'nsenter',
    ['--target', String(running.child.pid), '--mount', '--', 'sh', '-c', 'cp "$DIR"/baton.db* "$COPY"/'],
    {
      env: { ...process.env, DIR: running.dir, COPY: copy },
      stdio: 'ignore',
    },
  );
  return { store: sqliteStore({ path: join(copy, 'baton.db') }), copy };
}

describe('a disk that fills up under a running server (SQLite)', () => {
  it('for less than the ride-out, fails nothing: calls wait, and each accepted call ends once, its caller told once', {
    timeout: 120_000,
  }, async () => {
    server = await startServer({ shell: 'mount -t tmpfs -o size=24m tmpfs "$DIR"' });
    const running = server;
    const { address } = running;
    // Calls that run through the fault, in the background: their progress and ends need room.
    const background = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        call(address, { name: 'slow_report', args: { seconds: 3 }, sessionId: `bg-${i % 2}` }),
      ),
    );
    expect(background.map((reply) => reply.status)).toEqual(Array(6).fill('backgrounded'));
    inServerNamespace(running, FILL);
    const stop = { done: false };
    const large = largeCalls(address, stop, 'during');
    // The disk stays full for four seconds (a real disk and real processes: this wait is the
    // fault's length, not a race), then someone frees it.
    await new Promise((resolve) => setTimeout(resolve, 4_000));
    // No more large calls: they would fill it again.
    stop.done = true;
    inServerNamespace(running, FREE);
    const replies = await large;
    // The fault bit: a call waited through it, seconds long; and none was refused.
    expect(Math.max(...replies.map((reply) => reply.ms ?? 0))).toBeGreaterThan(1_500);
    expect(replies.filter((reply) => reply.status !== 'succeeded')).toEqual([]);
    const accepted = [...background, ...replies].map((reply) => reply.callId);
    const statuses = await allEnded(address, accepted);
    expect(Object.entries(statuses).filter(([, status]) => status !== 'succeeded')).toEqual([]);

    const { store, copy } = await storeOf(running);
    try {
      for (const callId of accepted) {
        const record = await store.getCall(callId);
        const events = await store.listEvents(callId);
        const ends = events.filter((event) => isTerminalStatus(event.type as never));
        expect({ callId, ends: ends.map((event) => event.type) }).toEqual({ callId, ends: [record?.status] });
        // No call ran twice.
        expect(events.filter((event) => event.type === 'started')).toHaveLength(1);
      }
      const notifications = await store.listNotifications();
      for (const reply of background) {
        expect(notifications.filter((notification) => notification.callId === reply.callId)).toHaveLength(1);
      }
      expect(notifications).toHaveLength(background.length);
    } finally {
      await store.close();
      rmSync(copy, { recursive: true, force: true });
    }
  });

  it('for longer than the ride-out: a call not kept is told so, leaves nothing, and its id works once there is room', {
    timeout: 120_000,
  }, async () => {
    server = await startServer({
      shell: 'mount -t tmpfs -o size=24m tmpfs "$DIR"',
      env: { BATON_STORE_RETRY_MS: '2000' },
    });
    const { address } = server;
    const running = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        call(address, { name: 'slow_report', args: { seconds: 2 }, sessionId: `bg-${i % 2}` }),
      ),
    );
    expect(running.map((reply) => reply.status)).toEqual(Array(8).fill('backgrounded'));
    inServerNamespace(server, FILL);
    const replies = await largeCalls(address, { done: false }, 'full');
    const refused = replies.at(-1);
    // The call was not kept: the caller hears so, and when to come back.
    expect(refused?.http).toBe(503);
    expect(refused?.error?.code).toBe('store_unavailable');
    expect(refused?.error?.message).toMatch(/full/);
    // Nothing is kept under its id.
    const missing = await fetch(`${address}/v1/calls/${refused?.callId}`, {
      signal: AbortSignal.timeout(10_000),
    });
    expect(missing.status).toBe(404);
    // The health check answers (it may or may not find room for its small write), and fast.
    const health = await fetch(`${address}/healthz`, { signal: AbortSignal.timeout(5_000) });
    expect([200, 503]).toContain(health.status);

    // The running calls end while the disk is still full (they take 2 s): their ends wait.
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    inServerNamespace(server, FREE);
    const statuses = await allEnded(
      address,
      running.map((reply) => reply.callId),
    );
    expect(Object.values(statuses).filter((status) => !isTerminalStatus(status as never))).toEqual([]);
    expect((await fetch(`${address}/healthz`)).status).toBe(200);
    // The id of the call that was not kept is free: the same call again runs, and is kept.
    const again = await call(address, {
      name: 'echo',
      args: { text: 'after' },
      sessionId: 'big',
      callId: refused?.callId,
    });
    expect(again).toMatchObject({ http: 200, status: 'succeeded' });
  });
});

describe('a store on a read-only file system', () => {
  it('stops the start at once with one line that names the file and what to do', {
    timeout: 60_000,
  }, async () => {
    const made = mkdtempSync(join(tmpdir(), 'baton-readonly-'));
    const store = sqliteStore({ path: join(made, 'baton.db') });
    await store.write({ calls: [] });
    await store.close();
    const dir = mkdtempSync(join(tmpdir(), 'baton-readonly-mount-'));
    const shell = `mount -t tmpfs tmpfs "${dir}" && cp "${made}"/baton.db* "${dir}/" && mount -o remount,ro "${dir}" && exec "$0" "$1"`;
    const child = spawn(
      'unshare',
      ['--mount', '--propagation', 'private', 'sh', '-c', shell, process.execPath, MAIN],
      {
        env: { ...process.env, BATON_PORT: '0', BATON_STORE: join(dir, 'baton.db') },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const code = await new Promise((resolve) => child.on('exit', resolve));
    rmSync(made, { recursive: true, force: true });
    rmSync(dir, { recursive: true, force: true });
    expect(code).toBe(1);
    expect(stderr).toMatch(/^baton: the SQLite store \S+ cannot (be written|be opened): [^\n]+\n$/);
  });
});

describe('a PostgreSQL outage under load', () => {
  it('fails no accepted call: calls made while it is down wait, and every call ends once it is back', {
    timeout: 120_000,
  }, async () => {
    const postgres = await throwawayPostgres({ own: true });
    try {
      const running = await startServer({ env: { BATON_STORE: postgres.url } });
      server = running;
      const { address } = running;
      const background = await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          call(address, { name: 'slow_report', args: { seconds: 2 }, sessionId: `pg-${i}` }),
        ),
      );
      expect(background.map((reply) => reply.status)).toEqual(Array(6).fill('backgrounded'));
      // Light load all along, from four callers, while PostgreSQL is away for four seconds.
      let stop = false;
      let broken: unknown;
      const replies: Reply[] = [];
      const caller = async (who: number) => {
        for (let i = 0; !stop; i++) {
          replies.push(
            await call(address, { name: 'echo', args: { text: `${who}.${i}` }, sessionId: `load-${who}` }),
          );
        }
      };
      const load = Promise.all([0, 1, 2, 3].map(caller)).catch((error: unknown) => {
        // A call that hung, or a server that died.
        broken = error;
      });
      const until = async (count: number) => {
        while (replies.length < count) {
          if (broken) throw broken;
          await new Promise((resolve) => setImmediate(resolve));
        }
      };
      await until(40);
      const before = replies.length;
      await postgres.outage(4_000);
      const during = replies.length - before;
      await until(replies.length + 80);
      stop = true;
      await load;
      if (broken) throw broken;
      const failed = replies.filter((reply) => reply.status !== 'succeeded');
      process.stdout.write(
        `pg outage of 4 s: ${replies.length} calls, ${during} answered while it was away, ${failed.length} not succeeded\n`,
      );
      expect(failed).toEqual([]);
      const accepted = [...background, ...replies].map((reply) => reply.callId);
      const statuses = await allEnded(address, accepted);
      expect(Object.entries(statuses).filter(([, status]) => status !== 'succeeded')).toEqual([]);
      expect((await fetch(`${address}/healthz`)).status).toBe(200);
    } finally {
      await server?.stop();
      server = undefined;
      await postgres.stop();
    }
  });
});
