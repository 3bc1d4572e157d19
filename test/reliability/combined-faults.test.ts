/**
 * Every fault at once, as the outside probes made them: two API servers (`baton serve --role
 * client`) and two workers (`baton worker`) reach PostgreSQL through a TCP proxy; under load, the
 * database is blackholed, a worker is SIGKILLed inside the blackhole and a client is SIGTERMed
 * inside it too; then the database refuses connections while the killed worker and the stopped
 * client start again. One call in seven is sent to both clients at once (a load balancer's retry),
 * and every caller is careful: a request that gets no answer, or a 503, is sent again with the
 * same call id to the other client. One call in four is steered: its caller sends it two messages
 * at once and then `finish`, each with its idempotency key, again at the other client on an error;
 * it tells an update of each message it reads, and its session is reminded that it still runs.
 * The invariants are checked from the store and the callers' ledger (see fault-ledger.ts).
 * `BATON_FAULT_ROUNDS` (default 1) runs the faults that many times: the long form, by hand.
 */
import { appendFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { type ServerProcess, startServer, startWorker, type WorkerProcess } from '@baton/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { load } from './careful-callers.js';
import { counted, noViolations, talkCounted, violations } from './fault-ledger.js';
import { type ProxiedDatabase, proxiedDatabase, type TcpProxy } from './tcp-proxy.js';

const TOOLS = join(import.meta.dirname, 'fault-tools.mjs');
const ROUNDS = Number(process.env.BATON_FAULT_ROUNDS ?? 1);
const dir = mkdtempSync(join(tmpdir(), 'baton-combined-faults-'));
const RUNS_LOG = join(dir, 'runs.log');
const READS_LOG = join(dir, 'reads.log');
writeFileSync(RUNS_LOG, '');
writeFileSync(READS_LOG, '');
const ENV = { RUNS_LOG, READS_LOG, BATON_INLINE_BUDGET_MS: '1000', BATON_STORE_RETRY_MS: '20000' };

let database: ProxiedDatabase;
let direct: string;
let proxied: string;
let proxy: TcpProxy;
const everyProcess: Array<ServerProcess | WorkerProcess> = [];
beforeAll(async () => {
  database = await proxiedDatabase('faults');
  ({ direct, proxied, proxy } = database);
}, 60_000);
afterAll(async () => {
  for (const { child } of everyProcess) if (child.exitCode === null) child.kill('SIGKILL');
  await database?.stop();
  if (!process.env.KEEP_FAULT_LOGS) rmSync(dir, { recursive: true, force: true });
  else process.stdout.write(`logs kept in ${dir}\n`);
});

let logs = 0;
const logged = <T extends ServerProcess | WorkerProcess>(name: string, started: T): T => {
  const file = join(dir, `${name}-${logs++}.log`);
  started.child.stdout.on('data', (chunk: Buffer) => appendFileSync(file, chunk));
  everyProcess.push(started);
  return started;
};
const worker = () =>
  startWorker({ store: proxied, module: TOOLS, args: ['--concurrency', '8'], env: ENV }).then((w) =>
    logged('worker', w),
  );
const client = () =>
  startServer({ args: [TOOLS, '--role', 'client'], env: { ...ENV, BATON_STORE: proxied } }).then((c) =>
    logged('client', c),
  );

/** The lines logged at error level (pino's 50) or worse by every process of the run. */
const errorLines = () =>
  readdirSync(dir)
    .filter((file) => /^(client|worker)-\d+\.log$/.test(file))
    .flatMap((file) => readFileSync(join(dir, file), 'utf8').split('\n'))
    .filter((line) => /"level":(50|60)\b/.test(line));

/** The API servers callers may reach now: a stopped one is taken out once it has exited. */
const clients: ServerProcess[] = [];

describe('every fault at once, on two clients and two workers through a TCP proxy', () => {
  it(`a blackhole with a worker SIGKILLed and a client SIGTERMed inside it, then a refusal while they start again (${ROUNDS} round${ROUNDS > 1 ? 's' : ''}): every invariant holds`, {
    timeout: 120_000 + ROUNDS * 90_000,
  }, async () => {
    const workers = [await worker(), await worker()];
    clients.push(await client(), await client());
    const killed = new Map<string, number>();
    const stop = { done: false };
    const loading = load(clients, stop, 8, { steered: true });
    try {
      for (let round = 0; round < ROUNDS; round++) {
        await sleep(5_000);
        const blackhole = proxy.hang(10_000);
        await sleep(2_000);
        const victim = workers.shift() as WorkerProcess;
        killed.set(String(victim.child.pid), Date.now());
        victim.child.kill('SIGKILL');
        await sleep(2_000);
        // Callers reach it while it stops, as a load balancer's would: they hear 503, or nothing.
        const stopping = clients[0] as ServerProcess;
        const stopped = stopping.stop();
        await blackhole;
        expect(await stopped).toBe(0);
        clients.splice(clients.indexOf(stopping), 1);
        // Refused while the killed worker and the stopped client start again: they wait for it.
        const refusal = proxy.cut(3_000);
        const restarted = Promise.all([worker(), client()]);
        await refusal;
        const [again, back] = await restarted;
        workers.push(again);
        clients.push(back);
      }
      await sleep(5_000);
    } finally {
      stop.done = true;
    }
    const ledger = await loading;
    const found = await violations(direct, RUNS_LOG, ledger, killed, READS_LOG);
    const calls = new Set(ledger.map((entry) => entry.callId)).size;
    const retried = ledger.filter((entry) => entry.requests > 1).length;
    const backgrounded = ledger.filter((entry) => entry.answered === 'backgrounded').length;
    const messages = ledger.flatMap((entry) => entry.messages ?? []);
    const steered = new Set(ledger.filter((entry) => entry.tool === 'steered').map((entry) => entry.callId));
    const talk = await talkCounted(direct);
    process.stdout.write(
      `combined faults: ${calls} calls, ${ledger.length} callers (${retried} sent again), ` +
        `${backgrounded} told backgrounded, ${steered.size} steered with ${messages.length} messages ` +
        `(${messages.filter((message) => message.requests > 1).length} sent again), ` +
        `${talk.updates} updates and ${talk.reminders} reminders told, ${ROUNDS} round(s); ` +
        `violations: ${counted(found)}\n`,
    );
    expect(calls).toBeGreaterThan(100);
    expect(talk.updates).toBeGreaterThan(0);
    expect(talk.reminders).toBeGreaterThan(0);
    expect(found).toEqual(noViolations());
    // Every fault here is ridden out, so no process logs at error level: an operator's alert on
    // error lines stays quiet through a database restart (the faults it rode out are warnings).
    expect(errorLines()).toEqual([]);
    for (const process of [...clients.splice(0), ...workers]) expect(await process.stop()).toBe(0);
  });
});
