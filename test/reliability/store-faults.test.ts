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
 * The store fails under a running server: its disk fills up. Calls made during the fault fail with
 * a clear persistence_failed and nothing hangs; once the fault clears, every call that was accepted
 * before it ends (none stays `backgrounded`), and new calls succeed. A store on a read-only file
 * system stops the start with one line. (A file system cannot be turned read-only under a running
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

const FAULTS = [
  {
    name: 'the disk fills up',
    make: 'head -c 64m /dev/zero > "$DIR/filler" || true',
    clear: 'rm -f "$DIR/filler"',
    says: /full/,
  },
];

describe.each(FAULTS)('when $name under a running server', ({ make, clear, says }) => {
  it('fails the calls it must with persistence_failed, hangs nothing, and ends every accepted call once the fault clears', {
    timeout: 120_000,
  }, async () => {
    server = await startServer({ shell: 'mount -t tmpfs -o size=24m tmpfs "$DIR"' });
    const { address } = server;
    // Calls that run through the fault: two seconds each, in the background.
    const running = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        call(address, { name: 'slow_report', args: { seconds: 2 }, sessionId: `bg-${i % 2}` }),
      ),
    );
    expect(running.map((reply) => reply.status)).toEqual(Array(8).fill('backgrounded'));

    inServerNamespace(server, make);
    // Large calls until the store refuses one: each needs room the store no longer has.
    let refused: Reply | undefined;
    for (let i = 0; i < 100 && !refused; i++) {
      const reply = await call(address, {
        name: 'echo',
        args: { text: `${i} ${'x'.repeat(400_000)}` },
        sessionId: 'big',
      });
      if (reply.status !== 'succeeded') refused = reply;
    }
    // The call was not kept: the caller hears so, and when to come back.
    expect(refused?.http).toBe(503);
    expect(refused?.error?.code).toBe('store_unavailable');
    expect(refused?.error?.message).toMatch(says);
    // The health check answers (it may or may not find room for its small write), and fast.
    const health = await fetch(`${address}/healthz`, { signal: AbortSignal.timeout(5_000) });
    expect([200, 503]).toContain(health.status);

    // The running calls end while the disk is still full (they take 2 s): their ends cannot be
    // stored. A real disk and real processes: this wait is the fault's duration, not a race.
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    inServerNamespace(server, clear);
    const statuses = await allEnded(
      address,
      running.map((reply) => reply.callId),
    );
    expect(Object.values(statuses).filter((status) => !isTerminalStatus(status as never))).toEqual([]);
    expect((await fetch(`${address}/healthz`)).status).toBe(200);
    expect((await call(address, { name: 'echo', args: { text: 'after' }, sessionId: 'after' })).status).toBe(
      'succeeded',
    );
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
