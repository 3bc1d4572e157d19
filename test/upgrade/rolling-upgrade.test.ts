/**
 * A rolling upgrade under load, on one PostgreSQL database: two API servers (`baton serve --role
 * client`) and two workers of the last release are replaced one by one by this tree's, the clients
 * first (the harder order: this version's clients beside the released workers), while careful
 * callers keep calling. Then a process of the release is started again, as a roll back would:
 * past a schema step this tree added, it refuses the store in one line; on the same schema, it
 * joins. The invariants of the combined-fault suite are checked from the store and the callers'
 * ledger: every accepted call ends once, every history starts with `queued` at 1 with no hole, one
 * notification per detached call, no tool run twice.
 */
import { spawnSync } from 'node:child_process';
import { appendFileSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freshDatabase, type ThrowawayPostgres, throwawayPostgres } from '@baton/store-postgres/testing';
import { type ServerProcess, startServer, startWorker, type WorkerProcess } from '@baton/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { load } from '../reliability/careful-callers.js';
import { counted, noViolations, violations } from '../reliability/fault-ledger.js';
import { type EarlierVersion, earlierVersion, filesAt } from './earlier-version.js';

/** The last release's commit (0.2.0, tagged `@baton/server@0.2.0`): move it on at each release. */
const RELEASE = 'a42cb25312182713cf9c5a4f8a4898ec9492cb74';
/** The PostgreSQL schema steps of a tree: the release's (from git) or this one's. */
const SQL = 'packages/store-postgres/sql';
const stepsOf = (names: readonly string[]) => names.filter((name) => /^\d{6}\.sql$/.test(name)).length;
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
  earlier = earlierVersion(RELEASE);
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

describe('a rolling upgrade from the last release to this tree, under load', () => {
  it('replaces the clients, then the workers, one by one: every invariant holds; the release started again joins the same schema, or refuses a newer one', {
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
    const found = await violations(database, RUNS_LOG, ledger, new Map());
    const calls = new Set(ledger.map((entry) => entry.callId)).size;
    const retried = ledger.filter((entry) => entry.requests > 1).length;
    process.stdout.write(
      `rolling upgrade: ${calls} calls, ${ledger.length} callers (${retried} sent again); violations: ` +
        `${counted(found)}\n`,
    );
    expect(calls).toBeGreaterThan(100);
    expect(found).toEqual(noViolations());

    // Rolled back: a process of the release started now meets the schema this tree made.
    const released = stepsOf(filesAt(RELEASE, SQL));
    const here = stepsOf(readdirSync(join(import.meta.dirname, '..', '..', SQL)));
    if (here > released) {
      const rolledBack = spawnSync(process.execPath, [earlier.cli, 'worker', earlier.tools], {
        env: { ...process.env, ...env() },
        encoding: 'utf8',
        timeout: 30_000,
      });
      expect(rolledBack.status).toBe(1);
      expect(rolledBack.stderr).toContain(
        `written by a newer Baton (schema ${here}; this one knows ${released})`,
      );
    } else {
      // No step since the release: its process joins the store, and drains cleanly.
      const rejoined = await worker('earlier');
      expect(await rejoined.stop()).toBe(0);
    }
    for (const process of [...clients, ...workers]) expect(await process.stop()).toBe(0);
  });
});
