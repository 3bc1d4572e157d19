/**
 * PostgreSQL goes away under load, behind a TCP proxy that cuts every connection (and refuses new
 * ones) or hangs them all, for 4, 8 and 12 s: longer than a lease, shorter than the ride-out.
 * Two API servers (`baton serve --role client`) and two workers (`baton worker`) reach it through
 * the proxy; callers make idempotent, non-idempotent, promoted and failing calls all along, some
 * sent to both API servers at once with one call id (a load balancer's retry). After every outage: every accepted call has exactly one terminal event and its record agrees, each
 * backgrounded call has one notification (the others none), every caller got the right end (both
 * callers of a repeated id too), and no call was interrupted or run twice. Real processes, a real database, real sockets.
 */
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { type ServerProcess, startServer, startWorker, type WorkerProcess } from '@baton/test-support';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ProxiedDatabase, proxiedDatabase, type TcpProxy } from './tcp-proxy.js';

const TOOLS = join(import.meta.dirname, '..', 'distributed', 'deployment-tools.mjs');
const dir = mkdtempSync(join(tmpdir(), 'baton-outages-'));
const RUNS_LOG = join(dir, 'runs.log');
writeFileSync(RUNS_LOG, '');

let database: ProxiedDatabase;
/** The database itself, for the checks. */
let direct: string;
/** The same database through the proxy, for Baton's processes. */
let proxied: string;
let proxy: TcpProxy;
const started: Array<{ child: { kill(signal: NodeJS.Signals): boolean; exitCode: number | null } }> = [];

beforeAll(async () => {
  database = await proxiedDatabase('outages');
  ({ direct, proxied, proxy } = database);
}, 60_000);
afterAll(async () => {
  for (const { child } of started) if (child.exitCode === null) child.kill('SIGKILL');
  await database?.stop();
  if (!process.env.KEEP_OUTAGE_LOGS) rmSync(dir, { recursive: true, force: true });
  else process.stdout.write(`logs kept in ${dir}\n`);
});

const ENV = { RUNS_LOG, BATON_INLINE_BUDGET_MS: '1000', BATON_STORE_RETRY_MS: '15000' };
const TERMINAL = new Set(['succeeded', 'failed', 'cancelled', 'timed_out']);
const TOOL_NAMES = ['work', 'charge', 'refuse'] as const;
type ToolName = (typeof TOOL_NAMES)[number];
type Ended = { status: string; output?: unknown; error?: { code: string; message: string } };

interface Outcome {
  callId: string;
  tool: ToolName;
  n: number;
  /** The HTTP status of the call's request. */
  http: number;
  end: Ended | undefined;
}

const clients: ServerProcess[] = [];

async function json(response: Response): Promise<Ended & { callId: string }> {
  return (await response.json()) as Ended & { callId: string };
}

/** Asks the API servers in turn until the call has ended. */
async function endOf(callId: string, n: number): Promise<Ended> {
  for (let turn = n; ; turn++) {
    const client = clients[turn % clients.length] as ServerProcess;
    const response = await fetch(`${client.address}/v1/calls/${callId}`);
    if (response.status === 200) {
      const record = await json(response);
      if (TERMINAL.has(record.status)) return record;
    } else {
      // 503 while the store is away past a read's ride-out: asked again.
      await response.body?.cancel();
    }
    await sleep(100);
  }
}

/**
 * One call, to one API server; one in seven is sent to both at once, as a load balancer that
 * retries on another server does: one outcome for each request.
 */
async function oneCall(n: number): Promise<Outcome[]> {
  const tool = TOOL_NAMES[n % 3] as ToolName;
  // Mostly short calls; one in five passes the inline budget and ends in the background.
  const ms = n % 5 === 0 ? 1_500 : 40 + (n % 4) * 70;
  const callId = `call-${n}`;
  const to = n % 7 === 0 ? clients : [clients[n % clients.length] as ServerProcess];
  return Promise.all(
    to.map(async (client) => {
      const response = await fetch(`${client.address}/v1/calls`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: tool, args: { n, ms }, sessionId: `agent-${n % 4}`, callId }),
      });
      const reply = await json(response);
      if (response.status !== 200) return { callId, tool, n, http: response.status, end: reply };
      const end = TERMINAL.has(reply.status) ? reply : await endOf(callId, n);
      return { callId, tool, n, http: 200, end };
    }),
  );
}

/** Callers, each making calls one after another until told to stop. */
async function load(stop: { done: boolean }, callers: number): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: callers }, async () => {
      while (!stop.done) outcomes.push(...(await oneCall(next++)));
    }),
  );
  return outcomes;
}

/** What a call should have ended with. */
function rightEnd({ tool, n, end }: Outcome): boolean {
  if (tool === 'refuse') return end?.status === 'failed' && end.error?.code === 'tool_error';
  if (end?.status !== 'succeeded') return false;
  const output = end.output as { worked?: number; charged?: number };
  return (tool === 'work' ? output.worked : output.charged) === n;
}

describe('PostgreSQL away for longer than a lease, shorter than the ride-out, under load', () => {
  it('cut or hung for 4, 8 and 12 s: every accepted call ends once, is told once, and nothing is interrupted or run twice', {
    timeout: 300_000,
  }, async () => {
    const workers: WorkerProcess[] = [];
    for (let i = 0; i < 2; i++) {
      const worker = await startWorker({
        store: proxied,
        module: TOOLS,
        args: ['--concurrency', '8'],
        env: ENV,
      });
      started.push(worker);
      workers.push(worker);
      worker.child.stdout.on('data', (chunk: Buffer) => appendFileSync(join(dir, `worker-${i}.log`), chunk));
      const client = await startServer({
        args: [TOOLS, '--role', 'client'],
        env: { ...ENV, BATON_STORE: proxied },
      });
      started.push(client);
      clients.push(client);
      client.child.stdout.on('data', (chunk: Buffer) => appendFileSync(join(dir, `client-${i}.log`), chunk));
    }
    const stop = { done: false };
    const loading = load(stop, 8);
    const faults: Array<['cut' | 'hang', number]> = [
      ['cut', 4_000],
      ['hang', 4_000],
      ['cut', 8_000],
      ['hang', 8_000],
      ['cut', 12_000],
      ['hang', 12_000],
    ];
    try {
      for (const [fault, ms] of faults) {
        // Load flows for longer than a lease (every process renews its lease: outages one after
        // another with no time between them are one longer outage), the database goes away
        // under it, and comes back.
        await sleep(6_000);
        await proxy[fault](ms);
      }
      await sleep(2_000);
    } finally {
      stop.done = true;
    }
    const outcomes = await loading;
    const callIds = new Set(outcomes.map(({ callId }) => callId));

    // Every call was accepted (the outages were shorter than the ride-out) and ended as it should.
    expect(outcomes.length).toBeGreaterThan(100);
    expect(outcomes.filter(({ http }) => http !== 200)).toEqual([]);
    expect(outcomes.filter((outcome) => !rightEnd(outcome))).toEqual([]);

    const db = new pg.Client({ connectionString: direct });
    await db.connect();
    try {
      const { rows: calls } = await db.query<{ call_id: string; status: string; detached: boolean }>(
        `SELECT call_id, status, (record->>'detached')::boolean AS detached FROM baton.calls`,
      );
      expect(calls.length).toBe(callIds.size);
      const { rows: ends } = await db.query<{ call_id: string; types: string[] }>(
        `SELECT call_id, array_agg(event->>'type') AS types FROM baton.events
          WHERE event->>'type' IN ('succeeded', 'failed', 'cancelled', 'timed_out') GROUP BY call_id`,
      );
      const endsOf = new Map(ends.map(({ call_id, types }) => [call_id, types]));
      const { rows: notices } = await db.query<{ call_id: string; count: number }>(
        'SELECT call_id, count(*)::int AS count FROM baton.notifications GROUP BY call_id',
      );
      const noticesOf = new Map(notices.map(({ call_id, count }) => [call_id, count]));
      const wrong = calls.filter(
        ({ call_id, status, detached }) =>
          (endsOf.get(call_id) ?? []).join() !== status ||
          (noticesOf.get(call_id) ?? 0) !== (detached ? 1 : 0),
      );
      expect(wrong).toEqual([]);
      const backgrounded = calls.filter(({ detached }) => detached).length;
      expect(backgrounded).toBeGreaterThan(10);

      // No call ran twice: none was taken over from a live worker, none written twice.
      const runs = new Map<string, number>();
      for (const line of readFileSync(RUNS_LOG, 'utf8').split('\n').filter(Boolean)) {
        const [tool, callId] = line.split(' ');
        runs.set(`${tool} ${callId}`, (runs.get(`${tool} ${callId}`) ?? 0) + 1);
      }
      expect([...runs].filter(([, count]) => count > 1)).toEqual([]);
      expect(runs.size).toBe(callIds.size);
      process.stdout.write(
        `outages: ${callIds.size} calls (${outcomes.length - callIds.size} sent twice at once), ` +
          `${backgrounded} in the background, through ${faults.length} outages\n`,
      );
    } finally {
      await db.end();
    }
    for (const process of [...clients.splice(0), ...workers]) expect(await process.stop()).toBe(0);
  });
});
