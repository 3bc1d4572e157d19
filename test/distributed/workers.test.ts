import { type ChildProcessByStdio, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { type CallEvent, type CallRecord, isTerminalStatus } from '@baton/contracts';
import { createRuntime, type Runtime } from '@baton/runtime';
import { storedEvents } from '@baton/runtime/testing';
import { postgresStore } from '@baton/store-postgres';
import { type ThrowawayPostgres, throwawayPostgres } from '@baton/store-postgres/testing';
import pg from 'pg';
import { filter, firstValueFrom } from 'rxjs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
// A plain ES module, shared with the worker processes.
import { distributedTools } from './tools.mjs';

let server: ThrowawayPostgres;
let schemas = 0;
beforeAll(async () => {
  server = await throwawayPostgres();
}, 60_000);
afterAll(() => server.stop());

/** A worker process and what it printed: the events it stored, per call. */
interface Worker {
  name: string;
  instanceId: string;
  child: ChildProcessByStdio<null, Readable, null>;
  /** Every line after `ready`. */
  lines: string[];
  /** Resolves when the worker prints this line. */
  printed(line: string): Promise<void>;
  /** Resolves once the worker has printed `count` lines that end with `suffix`. */
  printedCount(suffix: string, count: number): Promise<void>;
  /** Calls `listener` with each line the worker prints from now on. */
  onLine(listener: (line: string) => void): void;
  exited: Promise<number | null>;
}

const workers: Worker[] = [];
const clients: Runtime[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
  for (const worker of workers.splice(0)) {
    worker.child.kill('SIGCONT');
    worker.child.kill('SIGTERM');
    await worker.exited;
  }
});

async function startWorker(name: string, schema: string, env: Record<string, string> = {}): Promise<Worker> {
  const child = spawn(process.execPath, [join(import.meta.dirname, 'worker.mjs')], {
    env: { ...process.env, BATON_PG_URL: server.url, BATON_PG_SCHEMA: schema, WORKER_NAME: name, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const lines: string[] = [];
  const waiting = new Map<string, () => void>();
  const counted: Array<{ suffix: string; left: number; done: () => void }> = [];
  const listeners: Array<(line: string) => void> = [];
  let ready!: (instanceId: string) => void;
  const instanceId = new Promise<string>((resolve) => {
    ready = resolve;
  });
  createInterface({ input: child.stdout }).on('line', (line) => {
    if (line.startsWith('ready ')) return ready(line.slice(6));
    lines.push(line);
    waiting.get(line)?.();
    for (const listener of listeners) listener(line);
    for (const counter of counted) {
      if (line.endsWith(counter.suffix) && --counter.left === 0) counter.done();
    }
  });
  const worker: Worker = {
    name,
    instanceId: await instanceId,
    child,
    lines,
    exited,
    printed: (line) =>
      lines.includes(line) ? Promise.resolve() : new Promise((resolve) => waiting.set(line, resolve)),
    onLine: (listener) => listeners.push(listener),
    printedCount: (suffix, count) =>
      new Promise((done) => {
        const left = count - lines.filter((line) => line.endsWith(suffix)).length;
        if (left <= 0) done();
        else counted.push({ suffix, left, done });
      }),
  };
  workers.push(worker);
  return worker;
}

function client(schema: string): Runtime {
  const runtime = createRuntime({
    tools: distributedTools,
    store: postgresStore({ connectionString: server.url, schema }),
    role: 'client',
    pollMs: 500,
  });
  clients.push(runtime);
  return runtime;
}

/** Resolves with the call's record once it has ended, however long it runs (woken by the store). */
async function ended(runtime: Runtime, callId: string): Promise<CallRecord> {
  await firstValueFrom(
    runtime
      .follow({ callId: callId })
      .pipe(filter((event) => isTerminalStatus(event.type as CallRecord['status']))),
  );
  return (await runtime.get(callId)) as CallRecord;
}

async function query<T extends pg.QueryResultRow>(schema: string, sql: string, params: unknown[] = []) {
  const connection = new pg.Client({ connectionString: server.url });
  await connection.connect();
  try {
    await connection.query(`SET search_path = ${schema}`);
    return (await connection.query<T>(sql, params)).rows;
  } finally {
    await connection.end();
  }
}

const TERMINAL = ['succeeded', 'failed', 'cancelled', 'timed_out'];

/** The calls of a schema by status and owner: what a test that waits too long reports. */
async function progressOf(schema: string, phase: string): Promise<string> {
  const rows = await query<{ status: string; owner: string | null; n: number }>(
    schema,
    'SELECT status, owner_id AS owner, count(*)::int AS n FROM calls GROUP BY status, owner_id ORDER BY n DESC',
  );
  return `${phase}: ${JSON.stringify(rows)}`;
}

/** A guard on a wait for real processes: past `ms` it fails, saying where things stand. */
async function within<T>(work: Promise<T>, ms: number, report: () => Promise<string>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => void report().then((text) => reject(new Error(`still ${text}`)), reject), ms);
  });
  try {
    return await Promise.race([work, expired]);
  } finally {
    clearTimeout(timer);
  }
}

/** `c1`, a call of `sleepy` for a minute (it outlives its budget), once `worker` has started it. */
async function sleepingCall(submitter: Runtime, worker: Worker): Promise<void> {
  const reply = await submitter.call({ name: 'sleepy', args: { ms: 60_000 }, sessionId: 's', callId: 'c1' });
  expect(reply.status).toBe('backgrounded');
  await worker.printed('c1 started 1');
}

/** The record of `c1` once it ends; failing, where things stand, if that takes 30 s. */
function endOf(submitter: Runtime, schema: string): Promise<CallRecord> {
  return within(ended(submitter, 'c1'), 30_000, () => progressOf(schema, 'not ended'));
}

describe('a client process and worker processes on one PostgreSQL', () => {
  it('replies inline when a worker is fast, `backgrounded` at the budget when it is slow, and brings the end back', async () => {
    const schema = `replies_${process.pid}_${schemas++}`;
    await startWorker('w1', schema);
    const submitter = client(schema);

    expect(await submitter.call({ name: 'echo', args: { text: 'hi' }, sessionId: 's' })).toMatchObject({
      status: 'succeeded',
      output: { text: 'hi', by: 'w1' },
    });
    const slow = await submitter.call({ name: 'sleepy', args: { ms: 1_500 }, sessionId: 's' });
    expect(slow.status).toBe('backgrounded');
    expect(slow.output).toEqual({
      status: 'running',
      tool: 'sleepy',
      call_id: slow.callId,
      message:
        'This tool is taking longer than 300 ms, so it is continuing in the background. Continue the conversation; a later notification will report the result.',
    });
    expect(await ended(submitter, slow.callId)).toMatchObject({ status: 'succeeded', result: { by: 'w1' } });
    const [notification] = await submitter.notifications.list({ sessionId: 's' });
    expect(notification).toMatchObject({ callId: slow.callId, outcome: 'succeeded' });

    // Approval from the client: the call waits unclaimed, then goes to a worker.
    const guarded = await submitter.call({ name: 'guarded', args: {}, sessionId: 's' });
    expect(guarded.status).toBe('backgrounded');
    expect(await submitter.inputs.approve(guarded.callId)).toBe(true);
    expect(await ended(submitter, guarded.callId)).toMatchObject({
      status: 'succeeded',
      result: { by: 'w1' },
    });

    // Cancel from the client, of a call a worker runs.
    const long = await submitter.call({ name: 'sleepy', args: { ms: 60_000 }, sessionId: 's' });
    expect(await submitter.cancel(long.callId)).toBe(true);
    expect(await ended(submitter, long.callId)).toMatchObject({ status: 'cancelled' });
  });

  it('hands over the calls of a client that stops while its callers wait: each hears its call goes on, and its end becomes a notification', async () => {
    const schema = `client_drain_${process.pid}_${schemas++}`;
    const worker = await startWorker('w1', schema);
    const stopping = createRuntime({
      tools: distributedTools,
      store: postgresStore({ connectionString: server.url, schema }),
      role: 'client',
      inlineBudgetMs: 30_000,
    });
    const running = stopping.call({ name: 'sleepy', args: { ms: 1_500 }, sessionId: 's', callId: 'run' });
    await worker.printed('run started 1');
    // A deploy: the client stops with a short drain while its caller waits.
    const closed = stopping.close({ drainMs: 100 });
    const reply = await running;
    await closed;
    expect(reply).toMatchObject({
      status: 'backgrounded',
      output: {
        status: 'running',
        tool: 'sleepy',
        call_id: 'run',
        message: expect.stringMatching(
          /^The service running this tool is restarting, so the call is continuing/,
        ),
      },
    });
    // Nothing was cancelled: the worker finishes the call, and its end goes to the session.
    const submitter = client(schema);
    expect(await ended(submitter, 'run')).toMatchObject({
      status: 'succeeded',
      detached: true,
      result: { by: 'w1' },
    });
    expect(await submitter.notifications.list({ sessionId: 's' })).toMatchObject([
      { callId: 'run', outcome: 'succeeded' },
    ]);
  });

  it('answers `backgrounded` at the budget while no worker is up; a worker that starts later runs the call', async () => {
    const schema = `unclaimed_${process.pid}_${schemas++}`;
    const submitter = client(schema);
    const reply = await submitter.call({ name: 'sleepy', args: { ms: 10 }, sessionId: 's' });
    expect(reply).toMatchObject({ status: 'backgrounded', output: { status: 'running', tool: 'sleepy' } });
    expect(await submitter.get(reply.callId)).toMatchObject({ status: 'queued', detached: true });
    expect((await submitter.get(reply.callId))?.ownerId).toBeUndefined();
    await startWorker('late', schema);
    expect(await ended(submitter, reply.callId)).toMatchObject({
      status: 'succeeded',
      result: { by: 'late' },
    });
    expect(await submitter.notifications.list({ sessionId: 's' })).toMatchObject([{ callId: reply.callId }]);
  });

  it('gives the calls a closing worker claimed and did not start back to the other workers, and hands over the one it ran', async () => {
    const schema = `closing_${process.pid}_${schemas++}`;
    const closing = await startWorker('closing', schema, { CONCURRENCY: '1' });
    const submitter = client(schema);
    const replies = await Promise.all(
      [1, 2].map((n) =>
        submitter.call({ name: 'sleepy', args: { ms: 60_000 }, sessionId: 's', callId: `c${n}` }),
      ),
    );
    expect(replies.map((reply) => reply.status)).toEqual(['backgrounded', 'backgrounded']);
    // One runs; the other waits in the closing worker's queue (it claims twice its concurrency).
    await closing.printedCount(' started 1', 1);
    const running = closing.lines.some((line) => line === 'c1 started 1') ? 'c1' : 'c2';
    const waiting = running === 'c1' ? 'c2' : 'c1';
    expect((await submitter.get(waiting))?.ownerId).toBe(closing.instanceId);
    closing.child.kill('SIGTERM');
    expect(await closing.exited).toBe(0);
    // A close cancels nothing: the running call is handed over, its lease lapsed at once.
    expect(await submitter.get(running)).toMatchObject({ status: 'backgrounded', attempt: 1 });
    expect(await submitter.get(waiting)).toMatchObject({ status: 'queued', attempt: 0 });
    expect((await submitter.get(waiting))?.ownerId).toBeUndefined();

    const next = await startWorker('next', schema);
    await next.printed(`${waiting} started 1`);
    // The handed-over call is idempotent: the next worker runs it again.
    await next.printed(`${running} started 2`);
    for (const callId of [waiting, running]) {
      expect(await submitter.cancel(callId)).toBe(true);
      expect(await ended(submitter, callId)).toMatchObject({ status: 'cancelled', ownerId: next.instanceId });
    }
  });

  it('cancels a call whose cancel was sent while its worker’s LISTEN connection was down, once it listens again', async () => {
    const schema = `relisten_${process.pid}_${schemas++}`;
    // A lease longer than the test: the worker is stopped a moment, and nobody takes its call.
    const worker = await startWorker('w', schema, { LEASE_MS: '60000' });
    const submitter = client(schema);
    await sleepingCall(submitter, worker);
    // The worker's LISTEN connection is cut while it is stopped: it cannot make it again before
    // the cancel is sent, and the cancel's NOTIFY reaches no one.
    worker.child.kill('SIGSTOP');
    const cut = await query(
      schema,
      'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query = $1',
      [`LISTEN baton_${schema}`],
    );
    expect(cut).toHaveLength(1);
    expect(await submitter.cancel('c1', 'no longer needed')).toBe(true);
    worker.child.kill('SIGCONT');
    expect(await endOf(submitter, schema)).toMatchObject({ status: 'cancelled', ownerId: worker.instanceId });
    // The worker tells of the end once stored: its line may come after the client read the record.
    await worker.printed('c1 cancelled');
  });

  it('cancels a call whose cancel was sent to a worker that died, once another worker takes it over', async () => {
    const schema = `dead_cancel_${process.pid}_${schemas++}`;
    const dying = await startWorker('dying', schema);
    const submitter = client(schema);
    await sleepingCall(submitter, dying);
    dying.child.kill('SIGKILL');
    await dying.exited;
    // The call is still the dead worker's: the cancel goes to it, and reaches no one.
    expect(await submitter.cancel('c1')).toBe(true);
    const next = await startWorker('next', schema);
    expect(await endOf(submitter, schema)).toMatchObject({ status: 'cancelled', ownerId: next.instanceId });
  });

  it('conflates progress before it crosses the database; state changes never are', async () => {
    const schema = `progress_${process.pid}_${schemas++}`;
    await startWorker('w1', schema);
    const submitter = client(schema);
    const reply = await submitter.call({ name: 'chatty', args: {}, sessionId: 's' });
    expect(reply.status).toBe('succeeded');
    expect(await submitter.get(reply.callId)).toMatchObject({
      status: 'succeeded',
      progress: { current: 1_000 },
    });
    const types = (await storedEvents(submitter, reply.callId)).map((event: CallEvent) => event.type);
    expect(types.filter((type) => type === 'progress').length).toBeLessThanOrEqual(2);
    expect(types.filter((type) => type !== 'progress')).toEqual(['queued', 'started', 'succeeded']);
  });

  it('ends each of 2,000 calls exactly once while a worker is SIGKILLed mid-way; the dead worker’s idempotent calls re-run elsewhere', {
    timeout: 300_000,
  }, async () => {
    const schema = `scale_${process.pid}_${schemas++}`;
    // The killed worker is known gone at once (its PID is); a longer lease keeps workers that a
    // loaded machine starves for a second from looking dead to each other meanwhile.
    // The doomed worker kills itself once it runs 20 calls at once (SIGKILL_AT_RUNNING).
    const [doomed] = await Promise.all(
      ['w1', 'w2', 'w3'].map((name) =>
        startWorker(name, schema, {
          LEASE_MS: '5000',
          ...(name === 'w1' ? { SIGKILL_AT_RUNNING: '20' } : {}),
        }),
      ),
    );
    if (!doomed) throw new Error('no worker');
    const submitter = client(schema);
    const tools = ['echo', 'sleepy', 'once'] as const;
    const requests = Array.from({ length: 2_000 }, (_, i) => {
      const name = tools[i % 3] as (typeof tools)[number];
      const args = name === 'echo' ? { text: `#${i}` } : { ms: 20 + ((i * 37) % 180) };
      return { name, args, sessionId: `s${i % 50}`, callId: `call-${i}` };
    });
    const replies = Promise.all(requests.map((request) => submitter.call(request)));

    // Mid-way: while the doomed worker runs at least 20 calls.
    expect(await doomed.exited).toBeNull();
    expect(doomed.child.signalCode).toBe('SIGKILL');

    const answered = await within(replies, 120_000, () => progressOf(schema, 'waiting for the replies'));
    expect(answered).toHaveLength(2_000);
    const records = await within(
      Promise.all(answered.map((reply) => ended(submitter, reply.callId))),
      120_000,
      () => progressOf(schema, 'waiting for the ends'),
    );
    const unfinished = records.filter((record) => !isTerminalStatus(record.status));
    expect(
      unfinished.map(({ callId, status, ownerId, attempt }) => ({ callId, status, ownerId, attempt })),
    ).toEqual([]);

    // Exactly once: one terminal event per call, and one notification per call that was backgrounded.
    const ends = await query<{ call_id: string; n: number }>(
      schema,
      `SELECT call_id, count(*)::int AS n FROM events WHERE event->>'type' = ANY($1) GROUP BY call_id`,
      [TERMINAL],
    );
    expect(ends).toHaveLength(2_000);
    expect(ends.filter(({ n }) => n !== 1)).toEqual([]);
    const notified = await query<{ call_id: string; n: number }>(
      schema,
      'SELECT call_id, count(*)::int AS n FROM notifications GROUP BY call_id',
    );
    expect(notified.filter(({ n }) => n !== 1)).toEqual([]);
    const detached = records
      .filter((record) => record.detached)
      .map((record) => record.callId)
      .sort();
    expect(notified.map(({ call_id }) => call_id).sort()).toEqual(detached);

    // The calls the dead worker had started and not ended: the idempotent ones ran again on
    // another worker (attempt 2); the others ended `interrupted`.
    const endedByDoomed = new Set(
      doomed.lines
        .filter((line) => TERMINAL.some((type) => line.endsWith(` ${type}`)))
        .map((line) => line.split(' ')[0]),
    );
    const orphans = records.filter(
      (record) => doomed.lines.includes(`${record.callId} started 1`) && !endedByDoomed.has(record.callId),
    );
    const rerun = orphans.filter(
      (record) => record.toolName !== 'once' && record.ownerId !== doomed.instanceId,
    );
    expect(rerun.length).toBeGreaterThan(0);
    for (const record of rerun) {
      expect(record).toMatchObject({ status: 'succeeded', attempt: 2 });
      expect((record.result as { by: string }).by).not.toBe('w1');
    }
    for (const record of orphans.filter(
      (orphan) => orphan.toolName === 'once' && orphan.ownerId !== doomed.instanceId,
    )) {
      expect(record).toMatchObject({ status: 'failed', error: { code: 'interrupted' } });
    }
  });

  it('fences a worker that was stopped past its lease: its late writes change nothing', {
    timeout: 60_000,
  }, async () => {
    const schema = `fencing_${process.pid}_${schemas++}`;
    const stopped = await startWorker('A', schema);
    const submitter = client(schema);
    const reply = await submitter.call({
      name: 'sleepy',
      args: { ms: 2_500 },
      sessionId: 's',
      callId: 'fenced',
    });
    expect(reply.status).toBe('backgrounded');
    await stopped.printed('fenced started 1');
    stopped.child.kill('SIGSTOP');

    // B finds A's lease lapsed, takes the call over and runs it again.
    await startWorker('B', schema);
    const record = await ended(submitter, 'fenced');
    expect(record).toMatchObject({ status: 'succeeded', attempt: 2, result: { by: 'B' } });
    const before = await storedEvents(submitter, 'fenced');

    // A wakes up, its tool returns, and it writes the end of attempt 1: the commit changes nothing.
    stopped.child.kill('SIGCONT');
    await stopped.printed('fenced succeeded');
    expect(await submitter.get('fenced')).toEqual(record);
    expect(await storedEvents(submitter, 'fenced')).toEqual(before);
    expect(await submitter.notifications.list({ sessionId: 's' })).toHaveLength(1);
  });

  it("tells a client process of a session's notifications as a worker process stores them", async () => {
    const schema = `watch_${process.pid}_${schemas++}`;
    await startWorker('w1', schema);
    const submitter = client(schema);
    const told: Array<{ callId: string; outcome: string }> = [];
    let watching: { unsubscribe(): void } | undefined;
    const two = new Promise<void>((resolve) => {
      watching = submitter.notifications
        .watch({ sessionId: 'idle-chat' })
        .subscribe(({ callId, outcome }) => {
          told.push({ callId, outcome });
          if (told.length === 2) resolve();
        });
    });
    const first = await submitter.call({ name: 'noted', args: { n: 1 }, sessionId: 'idle-chat' });
    await submitter.call({ name: 'noted', args: { n: 2 }, sessionId: 'another-chat' });
    const second = await submitter.call({ name: 'noted', args: { n: 3 }, sessionId: 'idle-chat' });
    await within(two, 20_000, () => progressOf(schema, 'not told'));
    watching?.unsubscribe();
    const byCall = (a: { callId: string }, b: { callId: string }) => a.callId.localeCompare(b.callId);
    expect(told.sort(byCall)).toEqual(
      [
        { callId: first.callId, outcome: 'succeeded' },
        { callId: second.callId, outcome: 'succeeded' },
      ].sort(byCall),
    );
  });

  it('delivers each notification to its webhook once through two worker processes, a retry after a 503 included', {
    timeout: 60_000,
  }, async () => {
    const schema = `webhooks_${process.pid}_${schemas++}`;
    const CALLS = 40;
    // A receiver that answers each delivery's first attempt 503 and later ones 200.
    const attempts = new Map<string, number>();
    const receiver = createServer((request, response) => {
      request.resume();
      request.on('end', () => {
        const id = String(request.headers['webhook-id']);
        const attempt = (attempts.get(id) ?? 0) + 1;
        attempts.set(id, attempt);
        response.writeHead(attempt === 1 ? 503 : 200).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    try {
      const env = {
        WEBHOOK_URL: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`,
        WEBHOOK_SECRET: `whsec_${randomBytes(32).toString('base64')}`,
        WEBHOOK_RETRY_MS: '100',
        POLL_MS: '50',
      };
      const pair = [await startWorker('w1', schema, env), await startWorker('w2', schema, env)];
      const delivered = new Promise<void>((resolve) => {
        let left = CALLS;
        for (const worker of pair) {
          worker.onLine((line) => {
            if (line.endsWith(' delivered') && --left === 0) resolve();
          });
        }
      });
      const submitter = client(schema);
      for (let n = 0; n < CALLS; n++) {
        expect((await submitter.call({ name: 'noted', args: { n }, sessionId: 's' })).status).toBe(
          'backgrounded',
        );
      }
      await within(delivered, 30_000, async () => `not all delivered: ${JSON.stringify([...attempts])}`);
      // Each delivery was attempted twice, each attempt by one process; no third.
      expect([...attempts.values()]).toEqual(Array(CALLS).fill(2));
      const made = pair.flatMap((worker) => worker.lines.filter((line) => line.includes(' webhook ')));
      expect(made).toHaveLength(2 * CALLS);
      expect(new Set(made.map((line) => line.split(' ').slice(0, 3).join(' '))).size).toBe(2 * CALLS);
      expect(await submitter.webhooks.count({ status: 'delivered' })).toBe(CALLS);
    } finally {
      receiver.closeAllConnections();
      await new Promise((resolve) => receiver.close(resolve));
    }
  });
});
