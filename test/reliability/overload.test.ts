/**
 * Sustained overload: calls arrive at twice what the workers end, for twice as long as a caller
 * would take to reach its timeout without pushback (its wait grows by a second each second: the
 * backlog grows by as many calls as the workers end). A client (`baton serve --role client`) with
 * a bound on the calls it waits for and a wait for a claim answers every call within a bound, or
 * refuses it 429 with `Retry-After` and keeps nothing; the calls it holds stay within their bound;
 * the backlog drains after; every accepted call ends once, its caller hears of it once (its end,
 * or a notification), and no tool that is not idempotent runs twice.
 */
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freshDatabase, type ThrowawayPostgres, throwawayPostgres } from '@baton/store-postgres/testing';
import { type ServerProcess, startServer, startWorker, type WorkerProcess } from '@baton/test-support';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CallerRecord, counted, noViolations, violations } from './fault-ledger.js';

const TOOLS = join(import.meta.dirname, '..', 'distributed', 'deployment-tools.mjs');
const dir = mkdtempSync(join(tmpdir(), 'baton-overload-'));
const RUNS_LOG = join(dir, 'runs.log');
writeFileSync(RUNS_LOG, '');
/** One worker of 4 slots, each call 200 ms: the workers end 20 calls a second. */
const ENDED_PER_SECOND = 20;
const CALL_MS = 200;
const OFFERED_PER_SECOND = 2 * ENDED_PER_SECOND;
/** The caller's own timeout: without pushback the wait passes it after as many seconds. */
const CALLER_TIMEOUT_S = 8;
const OVERLOAD_S = 2 * CALLER_TIMEOUT_S + 2;
const CLAIM_WAIT_MS = 2_000;
const WAITING_FOR_WORKERS = 40;
/** Every answer within this: the wait for a claim, the run, and room for a loaded 2-core machine. */
const ANSWER_BOUND_MS = 5_000;
// A budget past the caller's timeout: only the wait for a claim bounds an answer.
const ENV = { RUNS_LOG, BATON_INLINE_BUDGET_MS: '30000' };

let postgres: ThrowawayPostgres;
let database: string;
const everyProcess: Array<ServerProcess | WorkerProcess> = [];
beforeAll(async () => {
  postgres = await throwawayPostgres();
  database = await freshDatabase(postgres.url, 'overload');
}, 60_000);
afterAll(async () => {
  for (const { child } of everyProcess) if (child.exitCode === null) child.kill('SIGKILL');
  await postgres?.stop();
  rmSync(dir, { recursive: true, force: true });
});

interface Asked {
  n: number;
  tool: CallerRecord['tool'];
  ms: number;
  http: number | undefined;
  retryAfter: string | null;
  reply: { status: string; error?: { code: string } } | undefined;
}

async function ask(client: ServerProcess, n: number): Promise<Asked> {
  const tool = n % 2 === 0 ? 'work' : 'charge';
  const started = performance.now();
  const asked: Asked = { n, tool, ms: 0, http: undefined, retryAfter: null, reply: undefined };
  try {
    const response = await fetch(`${client.address}/v1/calls`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        name: tool,
        args: { n, ms: CALL_MS },
        sessionId: `agent-${n % 4}`,
        callId: `call-${n}`,
      }),
      signal: AbortSignal.timeout(60_000),
    });
    asked.http = response.status;
    asked.retryAfter = response.headers.get('retry-after');
    const body = (await response.json()) as { status: string; error?: { code: string } };
    asked.reply = response.status === 200 ? body : { ...body, status: 'refused' };
  } catch (error) {
    asked.reply = { status: `no answer: ${(error as Error).message}` };
  }
  asked.ms = performance.now() - started;
  return asked;
}

/** The highest value the client's gauge of calls waiting for workers took, read every 250 ms. */
function watchWaiting(client: ServerProcess, stop: { done: boolean }): Promise<number> {
  return (async () => {
    let highest = 0;
    while (!stop.done) {
      const text = await (await fetch(`${client.address}/metrics`)).text();
      const value = Number(/^baton_calls_waiting_for_workers (\d+)/m.exec(text)?.[1] ?? Number.NaN);
      highest = Math.max(highest, value);
      await sleep(250);
    }
    return highest;
  })();
}

describe('a client under twice what its workers end, for twice a caller’s timeout', () => {
  it(`answers every call within ${ANSWER_BOUND_MS} ms or refuses it 429, holds at most ${WAITING_FOR_WORKERS}, and ends every accepted call once after`, {
    timeout: 180_000,
  }, async () => {
    const env = { ...ENV, BATON_STORE: database };
    const worker = await startWorker({ store: database, module: TOOLS, args: ['--concurrency', '4'], env });
    const client = await startServer({
      args: [TOOLS, '--role', 'client'],
      env: {
        ...env,
        BATON_CLAIM_WAIT_MS: String(CLAIM_WAIT_MS),
        BATON_WAITING_FOR_WORKERS: String(WAITING_FOR_WORKERS),
      },
    });
    everyProcess.push(worker, client);
    for (const [name, started] of [
      ['worker', worker],
      ['client', client],
    ] as const) {
      started.child.stdout.on('data', (chunk: Buffer) => appendFileSync(join(dir, `${name}.log`), chunk));
    }
    const stop = { done: false };
    const waiting = watchWaiting(client, stop);
    const asked: Promise<Asked>[] = [];
    const start = performance.now();
    for (let n = 0; performance.now() - start < OVERLOAD_S * 1_000; n++) {
      asked.push(ask(client, n));
      // Open loop: the next call comes when its time comes, answered or not.
      const due = start + ((n + 1) * 1_000) / OFFERED_PER_SECOND;
      await sleep(Math.max(0, due - performance.now()));
    }
    const answers = await Promise.all(asked);
    stop.done = true;
    const highestWaiting = await waiting;

    const accepted = answers.filter((answer) => answer.http === 200);
    const refused = answers.filter((answer) => answer.http === 429);
    const other = answers.filter((answer) => answer.http !== 200 && answer.http !== 429);
    const slowest = Math.max(...answers.map((answer) => answer.ms));
    process.stdout.write(
      `overload: ${answers.length} calls offered in ${OVERLOAD_S} s, ${accepted.length} accepted ` +
        `(${accepted.filter((answer) => answer.reply?.status === 'backgrounded').length} to the background), ` +
        `${refused.length} refused 429, slowest answer ${Math.round(slowest)} ms, at most ${highestWaiting} waiting\n`,
    );
    expect(other.map((answer) => `${answer.n}: ${answer.http} ${JSON.stringify(answer.reply)}`)).toEqual([]);
    expect(refused.length).toBeGreaterThan(0);
    expect(
      refused.every((answer) => answer.retryAfter !== null && answer.reply?.error?.code === 'overloaded'),
    ).toBe(true);
    expect(slowest).toBeLessThan(ANSWER_BOUND_MS);
    expect(highestWaiting).toBeLessThanOrEqual(WAITING_FOR_WORKERS);

    // The backlog drains: every accepted call ends, at the workers' pace.
    const db = new pg.Client({ connectionString: database });
    await db.connect();
    try {
      const until = Date.now() + 90_000;
      let left = Number.POSITIVE_INFINITY;
      while (left > 0 && Date.now() < until) {
        const { rows } = await db.query<{ left: number }>(
          "SELECT count(*)::int AS left FROM baton.calls WHERE status NOT IN ('succeeded', 'failed', 'cancelled', 'timed_out')",
        );
        left = rows[0]?.left ?? 0;
        if (left > 0) await sleep(500);
      }
      expect(left).toBe(0);
      const { rows: kept } = await db.query<{ call_id: string }>('SELECT call_id FROM baton.calls');
      const keptIds = new Set(kept.map((row) => row.call_id));
      // A refused call left nothing.
      expect(refused.filter((answer) => keptIds.has(`call-${answer.n}`))).toEqual([]);
      const { rows: ends } = await db.query<{ call_id: string; status: string; output: unknown }>(
        "SELECT call_id, status, record->'output' AS output FROM baton.calls",
      );
      const endOf = new Map(ends.map((row) => [row.call_id, row]));
      const ledger: CallerRecord[] = accepted.map((answer) => {
        const callId = `call-${answer.n}`;
        const stored = endOf.get(callId);
        return {
          callId,
          tool: answer.tool,
          n: answer.n,
          shared: false,
          requests: 1,
          answered: answer.reply?.status,
          end: stored && { status: stored.status, output: stored.output },
        };
      });
      const found = await violations(database, RUNS_LOG, ledger, new Map());
      process.stdout.write(`overload: violations: ${counted(found)}\n`);
      expect(found).toEqual(noViolations());
    } finally {
      await db.end();
    }
    for (const process of [client, worker]) expect(await process.stop()).toBe(0);
  });
});
