/**
 * A deployment on one PostgreSQL: two API servers (`baton serve --role client`) and two workers
 * (`baton worker`), load through REST and MCP, a rolling restart of every process in turn
 * (SIGTERM, then start again), and one worker SIGKILLed. Every accepted call ends exactly once,
 * none `cancelled`; every caller gets every result; no tool runs more often than its idempotency
 * allows. Real processes, real signals.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freshDatabase, type ThrowawayPostgres, throwawayPostgres } from '@baton/store-postgres/testing';
import { type ServerProcess, startServer, startWorker, type WorkerProcess } from '@baton/test-support';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const TOOLS = join(import.meta.dirname, 'deployment-tools.mjs');
const dir = mkdtempSync(join(tmpdir(), 'baton-deployment-'));
const RUNS_LOG = join(dir, 'runs.log');
writeFileSync(RUNS_LOG, '');

let postgres: ThrowawayPostgres;
let store: string;
beforeAll(async () => {
  postgres = await throwawayPostgres();
  store = await freshDatabase(postgres.url, 'deployment');
}, 60_000);
/** Every process the test started: those a failing test leaves running are killed at the end. */
const started: Array<{ child: { kill(signal: NodeJS.Signals): boolean; exitCode: number | null } }> = [];
afterAll(async () => {
  for (const { child } of started) if (child.exitCode === null) child.kill('SIGKILL');
  await postgres.stop();
  rmSync(dir, { recursive: true, force: true });
});

const ENV = {
  RUNS_LOG,
  // A drain shorter than the longest calls: some are handed over, as in a hurried deploy.
  BATON_DRAIN_MS: '1500',
  BATON_INLINE_BUDGET_MS: '1000',
};

async function startClient(): Promise<ServerProcess> {
  const client = await startServer({
    args: [TOOLS, '--role', 'client'],
    env: { ...ENV, BATON_STORE: store },
  });
  started.push(client);
  return client;
}
async function startOneWorker(): Promise<WorkerProcess> {
  const worker = await startWorker({ store, module: TOOLS, args: ['--concurrency', '8'], env: ENV });
  started.push(worker);
  return worker;
}

type Ended = { status: string; output?: unknown; error?: { code: string } };
const TERMINAL = new Set(['succeeded', 'failed', 'cancelled', 'timed_out']);
/** What a model reads of a call whose process stopped before it ended (the recovery rules). */
const INTERRUPTED_MESSAGE = 'The process running the tool call stopped before the call finished';

/** The API servers up now; a caller picks among them, and skips one that is stopping. */
const clients: ServerProcess[] = [];
let turn = 0;
function someClient(): ServerProcess {
  const client = clients[turn++ % clients.length];
  if (!client) throw new Error('no API server is up');
  return client;
}

/**
 * One request to whichever API server is up, again on another while one refuses it: 503 while it
 * drains, or no connection once it has stopped. Such a request was not accepted.
 */
async function toSomeClient(path: string, init: RequestInit): Promise<Response> {
  for (;;) {
    const client = someClient();
    try {
      const response = await fetch(`${client.address}${path}`, init);
      if (response.status !== 503) return response;
      await response.body?.cancel();
    } catch {
      // The server has stopped (connection refused): the next one.
    }
    await sleep(50);
  }
}

/** Asks any API server until the call has ended. */
async function endOf(callId: string): Promise<Ended> {
  for (;;) {
    const response = await toSomeClient(`/v1/calls/${callId}`, {});
    const record = (await response.json()) as Ended;
    if (TERMINAL.has(record.status)) return record;
    await sleep(100);
  }
}

interface Outcome {
  callId: string;
  tool: 'work' | 'charge';
  n: number;
  via: 'REST' | 'MCP';
  end: Ended;
}

/** A call over REST: the end at once, or `backgrounded` and the end asked for later. */
async function overRest(tool: 'work' | 'charge', n: number, ms: number): Promise<Outcome> {
  const callId = `rest-${n}`;
  const response = await toSomeClient('/v1/calls', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: tool, args: { n, ms }, sessionId: `agent-${n % 4}`, callId }),
  });
  const reply = (await response.json()) as Ended & { callId: string };
  if (response.status !== 200) throw new Error(`${response.status} ${JSON.stringify(reply)}`);
  const end = TERMINAL.has(reply.status) ? reply : await endOf(callId);
  return { callId, tool, n, via: 'REST', end };
}

/**
 * A call over MCP (2026-07-28, stateless, a client that takes no tasks): its result, or an
 * acknowledgement naming the `call_id` whose end is asked for later.
 */
async function overMcp(tool: 'work' | 'charge', n: number, ms: number): Promise<Outcome> {
  const response = await toSomeClient('/mcp', {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/call',
      'mcp-name': tool,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: n,
      method: 'tools/call',
      params: {
        name: tool,
        arguments: { n, ms },
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientInfo': { name: 'deployment-test', version: '1.0.0' },
          'io.modelcontextprotocol/clientCapabilities': {},
        },
      },
    }),
  });
  const text = await response.text();
  const json = response.headers.get('content-type')?.includes('text/event-stream')
    ? (
        text
          .split('\n')
          .filter((line) => line.startsWith('data: '))
          .at(-1) ?? ''
      ).slice(6)
    : text;
  const message = JSON.parse(json) as {
    result?: { content: Array<{ text: string }>; structuredContent?: unknown; isError?: boolean };
    error?: unknown;
  };
  if (!message.result) throw new Error(`MCP: ${json}`);
  const said = message.result.content[0]?.text ?? '';
  // A failure is its message, as a model reads it.
  if (message.result.isError) {
    const code = said.startsWith(INTERRUPTED_MESSAGE) ? 'interrupted' : said;
    return { callId: `mcp-${n}`, tool, n, via: 'MCP', end: { status: 'failed', error: { code } } };
  }
  const parsed = JSON.parse(said) as Record<string, unknown>;
  if (typeof parsed.call_id === 'string') {
    return { callId: parsed.call_id, tool, n, via: 'MCP', end: await endOf(parsed.call_id) };
  }
  return { callId: `mcp-${n}`, tool, n, via: 'MCP', end: { status: 'succeeded', output: parsed } };
}

/** Callers, each making calls one after another until told to stop. */
async function load(stop: { done: boolean }, callers: number): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  let next = 0;
  const caller = async (index: number) => {
    while (!stop.done) {
      const n = next++;
      const tool = n % 3 === 0 ? 'charge' : 'work';
      // Mostly short calls; one in eight outlives the drain, and is handed over.
      const ms = n % 8 === 0 ? 2_500 : 50 + (n % 5) * 60;
      outcomes.push(await (index % 3 === 2 ? overMcp(tool, n, ms) : overRest(tool, n, ms)));
    }
  };
  await Promise.all(Array.from({ length: callers }, (_, index) => caller(index)));
  return outcomes;
}

describe('a deployment: two API servers and two workers on one PostgreSQL', () => {
  it('rolls every process and loses a worker to SIGKILL: each call ends once, none cancelled, every caller gets its end', {
    timeout: 240_000,
  }, async () => {
    const workers: WorkerProcess[] = [await startOneWorker(), await startOneWorker()];
    clients.push(await startClient(), await startClient());
    const stop = { done: false };
    const loading = load(stop, 9);
    try {
      await sleep(2_000);
      // A rolling restart: each process in turn is told to stop, drains, and starts again.
      for (let index = 0; index < 2; index++) {
        const old = workers[index] as WorkerProcess;
        expect(await old.stop()).toBe(0);
        workers[index] = await startOneWorker();
        await sleep(1_500);
      }
      for (let index = 0; index < 2; index++) {
        const old = clients[index] as ServerProcess;
        // Callers go to the other one from now on; those it took get their ends as it drains.
        clients.splice(index, 1);
        expect(await old.stop()).toBe(0);
        clients.splice(index, 0, await startClient());
        await sleep(1_500);
      }
      // A worker dies mid-call: its lease lapses, and the other takes its calls up.
      const killed = workers[0] as WorkerProcess;
      killed.child.kill('SIGKILL');
      await new Promise((resolve) => killed.child.once('exit', resolve));
      await sleep(2_000);
      workers[0] = await startOneWorker();
      await sleep(2_000);
    } finally {
      stop.done = true;
    }
    const outcomes = await loading;

    // Every caller got an end, and it is the right one.
    expect(outcomes.length).toBeGreaterThan(100);
    const wrong = outcomes.filter(({ tool, n, end }) => {
      if (end.status === 'succeeded') {
        const output = end.output as { worked?: number; charged?: number };
        return (tool === 'work' ? output.worked : output.charged) !== n;
      }
      // A call that must not run twice may end interrupted; nothing else ends but succeeded.
      return !(tool === 'charge' && end.status === 'failed' && end.error?.code === 'interrupted');
    });
    expect(wrong).toEqual([]);

    const db = new pg.Client({ connectionString: store });
    await db.connect();
    try {
      // Every call stored has ended, none cancelled, each with one end among its events.
      const { rows: statuses } = await db.query<{ status: string; count: number }>(
        'SELECT status, count(*)::int AS count FROM baton.calls GROUP BY status ORDER BY status',
      );
      expect(
        statuses.map(({ status }) => status).filter((status) => !['succeeded', 'failed'].includes(status)),
      ).toEqual([]);
      const { rows: twice } = await db.query(
        `SELECT call_id, count(*) FROM baton.events
          WHERE event->>'type' IN ('succeeded', 'failed', 'cancelled', 'timed_out')
          GROUP BY call_id HAVING count(*) <> 1`,
      );
      expect(twice).toEqual([]);
      const stored = statuses.reduce((sum, { count }) => sum + count, 0);
      expect(stored).toBe(outcomes.length);
    } finally {
      await db.end();
    }

    // No call that must not run twice ran twice; one that ran again was safe to.
    const runs = new Map<string, number>();
    for (const line of readFileSync(RUNS_LOG, 'utf8').split('\n').filter(Boolean)) {
      const [tool, callId] = line.split(' ');
      runs.set(`${tool} ${callId}`, (runs.get(`${tool} ${callId}`) ?? 0) + 1);
    }
    const chargedTwice = [...runs].filter(([key, count]) => key.startsWith('charge ') && count > 1);
    expect(chargedTwice).toEqual([]);
    const handedOver = outcomes.filter(({ end }) => end.status === 'failed').length;
    const ranAgain = [...runs].filter(([key, count]) => key.startsWith('work ') && count > 1).length;
    process.stdout.write(
      `deployment: ${outcomes.length} calls (${outcomes.filter(({ via }) => via === 'MCP').length} over MCP), ` +
        `${handedOver} charges ended interrupted, ${ranAgain} idempotent calls ran again\n`,
    );

    for (const process of [...clients.splice(0), ...workers]) expect(await process.stop()).toBe(0);
  });
});
