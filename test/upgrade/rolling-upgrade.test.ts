/**
 * A rolling upgrade under load, on one PostgreSQL database: two API servers (`baton serve --role
 * client`) and two workers of an earlier version are replaced one by one by this version's, the
 * clients first (the harder order: this version's clients beside the earlier workers), while
 * careful callers keep calling. The earlier version is the last whose clients stored every call's
 * `queued` event and whose workers expect it (protocol 1). Then a process of the earlier version
 * is started again, as a roll back would: past the schema steps this version took, it refuses the
 * store in one line. The invariants of the combined-fault suite are checked from the store and the
 * callers' ledger: every accepted call ends once, every history starts with `queued` at 1 with no
 * hole, one notification per detached call, no tool run twice.
 */
import { spawnSync } from 'node:child_process';
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freshDatabase, type ThrowawayPostgres, throwawayPostgres } from '@baton/store-postgres/testing';
import { type ServerProcess, startServer, startWorker, type WorkerProcess } from '@baton/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { load } from '../reliability/careful-callers.js';
import { counted, noViolations, violations } from '../reliability/fault-ledger.js';
import { type EarlierVersion, earlierVersion } from './earlier-version.js';

/** The parent of the commit that moved the `queued` event of a waited call from client to worker. */
const PROTOCOL_1 = 'a0a5ef162de26260b4817ec99bf59a03f790298b^';
const TOOLS = join(import.meta.dirname, '..', 'distributed', 'deployment-tools.mjs');
const dir = mkdtempSync(join(tmpdir(), 'baton-rolling-upgrade-'));
const RUNS_LOG = join(dir, 'runs.log');
writeFileSync(RUNS_LOG, '');
// Long enough a drain that a stopped worker ends what it runs (the longest call takes 1.5 s).
const ENV = { RUNS_LOG, BATON_INLINE_BUDGET_MS: '1000', BATON_DRAIN_MS: '5000' };

let earlier: EarlierVersion;
let postgres: ThrowawayPostgres;
let database: string;
const everyProcess: Array<ServerProcess | WorkerProcess> = [];
beforeAll(async () => {
  earlier = earlierVersion(PROTOCOL_1);
  postgres = await throwawayPostgres();
  database = await freshDatabase(postgres.url, 'upgrade');
}, 300_000);
afterAll(async () => {
  for (const { child } of everyProcess) if (child.exitCode === null) child.kill('SIGKILL');
  await postgres?.stop();
  earlier?.remove();
  if (!process.env.KEEP_UPGRADE_LOGS) rmSync(dir, { recursive: true, force: true });
  else process.stdout.write(`logs kept in ${dir}\n`);
});

let logs = 0;
function logged<T extends ServerProcess | WorkerProcess>(name: string, started: T): T {
  const file = join(dir, `${name}-${logs++}.log`);
  started.child.stdout.on('data', (chunk: Buffer) => appendFileSync(file, chunk));
  everyProcess.push(started);
  return started;
}
const env = () => ({ ...ENV, BATON_STORE: database });
const worker = async (version: 'earlier' | 'this') =>
  logged(
    `${version}-worker`,
    await startWorker({
      store: database,
      args: ['--concurrency', '8'],
      env: env(),
      ...(version === 'earlier' ? { cli: earlier.cli, module: earlier.tools } : { module: TOOLS }),
    }),
  );
const client = async (version: 'earlier' | 'this') =>
  logged(
    `${version}-client`,
    await startServer({
      env: env(),
      ...(version === 'earlier'
        ? { main: earlier.main, args: [earlier.tools, '--role', 'client'] }
        : { args: [TOOLS, '--role', 'client'] }),
    }),
  );

describe('a rolling upgrade from the last version of protocol 1 to this one, under load', () => {
  it('replaces the clients, then the workers, one by one: every invariant holds, and the earlier version refuses the store afterwards', {
    timeout: 240_000,
  }, async () => {
    // The earlier version makes the schema, at its own step.
    const workers = [await worker('earlier'), await worker('earlier')];
    const clients: ServerProcess[] = [await client('earlier'), await client('earlier')];
    const stop = { done: false };
    const loading = load(clients, stop, 6);
    /** Starts this version's process beside the earlier one, then stops that one (a drain). */
    const roll = async <T extends ServerProcess | WorkerProcess>(list: T[], start: () => Promise<T>) => {
      const previous = list[0] as T;
      list.push(await start());
      // Callers reach it while it stops, as a load balancer's would: they hear 503, or nothing.
      const stopped = previous.stop();
      expect(await stopped).toBe(0);
      list.splice(list.indexOf(previous), 1);
      await sleep(3_000);
    };
    try {
      await sleep(3_000);
      // This version's first process migrates the schema while the earlier ones run on it.
      await roll(clients, () => client('this'));
      await roll(clients, () => client('this'));
      await roll(workers, () => worker('this'));
      await roll(workers, () => worker('this'));
    } finally {
      stop.done = true;
    }
    const ledger = await loading;
    const found = await violations(database, RUNS_LOG, ledger, new Set());
    const calls = new Set(ledger.map((entry) => entry.callId)).size;
    const retried = ledger.filter((entry) => entry.requests > 1).length;
    process.stdout.write(
      `rolling upgrade: ${calls} calls, ${ledger.length} callers (${retried} sent again); violations: ` +
        `${counted(found)}\n`,
    );
    expect(calls).toBeGreaterThan(100);
    expect(found).toEqual(noViolations());

    // Rolled back: a process of the earlier version started now meets the schema this one made.
    const rolledBack = spawnSync(process.execPath, [earlier.cli, 'worker', earlier.tools], {
      env: { ...process.env, ...env() },
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(rolledBack.status).toBe(1);
    expect(rolledBack.stderr).toMatch(/written by a newer Baton \(schema \d+; this one knows \d+\)/);
    for (const process of [...clients, ...workers]) expect(await process.stop()).toBe(0);
  });
});
