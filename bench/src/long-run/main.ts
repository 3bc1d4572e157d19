/**
 * The long run: Baton under a steady offered rate through the phases a production PostgreSQL goes
 * through (an idle transaction holding the horizon, REPEATABLE READ readers, backends killed, a
 * restart past the ride-out), each followed by a clean stretch to recover in, sampled every few
 * seconds: calls ended and failed, latency (a bounded histogram in the subject), dead tuples,
 * table and index size, connections, wait events, the queue. Writes `samples.json`,
 * `summary.json` and `plot.svg` to `--out`.
 *
 *   node bench/dist/long-run.js --phase-seconds 60 --rate 200 --out /tmp/long-run
 *
 * `--autovacuum tuned` sets the per-table settings under trial before the run (see TUNED);
 * `--naptime 10s` sets the server's `autovacuum_naptime` (how often autovacuum visits a database).
 * `--check` (the short form in CI) ends each recovery once the calls are back, and exits 1 if a
 * bound is broken (see `violations`). `--clients C --workers W` runs the split path (C client processes offered the rate between them,
 * W worker processes) in place of one process with both roles.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { freshDatabase, throwawayPostgres } from '@baton/store-postgres/testing';
import { startRole } from '../role-process.js';
import { roleEnv } from '../suites/postgres.js';
import { type DatabaseSample, harnessPool, sampleDatabase } from './database.js';
import { PHASES } from './phases.js';
import { type PlottedSample, plotRun } from './plot.js';
import { cleanP99Of, isRecovered, summaryOf, violations } from './summary.js';

const { values } = parseArgs({
  options: {
    'phase-seconds': { type: 'string', default: '60' },
    'recovery-seconds': { type: 'string' },
    check: { type: 'boolean', default: false },
    'sample-seconds': { type: 'string', default: '5' },
    rate: { type: 'string', default: '200' },
    autovacuum: { type: 'string', default: 'default' },
    naptime: { type: 'string' },
    clients: { type: 'string', default: '0' },
    workers: { type: 'string', default: '0' },
    out: { type: 'string' },
  },
});
const phaseMs = Number(values['phase-seconds']) * 1_000;
const recoveryMs = Number(values['recovery-seconds'] ?? values['phase-seconds']) * 1_000;
const sampleMs = Number(values['sample-seconds']) * 1_000;
const rate = Number(values.rate);
const out = values.out ?? mkdtempSync(join(tmpdir(), 'baton-long-run-'));
const SCHEMA = 'baton';

/** The per-table autovacuum settings under trial: vacuum the small churning tables by count. */
const TUNED = [
  'ALTER TABLE call_queue SET (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 500)',
  'ALTER TABLE call_owners SET (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 500)',
  'ALTER TABLE calls SET (autovacuum_vacuum_scale_factor = 0.02, autovacuum_vacuum_insert_scale_factor = 0.02)',
  'ALTER TABLE event_rows SET (autovacuum_vacuum_scale_factor = 0.02, autovacuum_vacuum_insert_scale_factor = 0.02)',
];

const postgres = await throwawayPostgres({ own: true });
const url = await freshDatabase(postgres.url, 'longrun');
const pool = harnessPool(url);
const split = Number(values.clients) > 0 && Number(values.workers) > 0;
const start = (role: 'client' | 'worker' | 'both') =>
  startRole({ script: 'workers/pg-role.mjs', env: roleEnv(url, SCHEMA, role) });
const clients = split
  ? await Promise.all(Array.from({ length: Number(values.clients) }, () => start('client')))
  : [await start('both')];
const workers = split
  ? await Promise.all(Array.from({ length: Number(values.workers) }, () => start('worker')))
  : [];
/** Each client's sample, summed (the percentiles: the worst client's). */
async function sampleClients(): Promise<number[]> {
  const each = await Promise.all(
    clients.map(async (client) => {
      const answered = client.next('sample');
      client.send('sample');
      return (await answered).map(Number);
    }),
  );
  return [0, 1, 2, 3, 4, 5, 6].map((at) =>
    at < 3 || at === 6
      ? each.reduce((sum, one) => sum + (one[at] ?? 0), 0)
      : Math.max(...each.map((one) => one[at] ?? 0)),
  );
}
if (values.naptime) {
  await pool.query(`ALTER SYSTEM SET autovacuum_naptime = '${values.naptime.replace(/[^0-9a-z]/g, '')}'`);
  await pool.query('SELECT pg_reload_conf()');
}
if (values.autovacuum === 'tuned') {
  for (const statement of TUNED)
    await pool.query(statement.replace('ALTER TABLE ', `ALTER TABLE ${SCHEMA}.`));
}
const queueSql = `SELECT count(*) AS n FROM ${SCHEMA}.call_queue`;
const samples: Array<
  PlottedSample & { database: DatabaseSample | undefined; inFlight: number; p95Ms: number }
> = [];
/** The calls the clients heard end well, go to the background, or fail, over the whole run. */
const totals = { ended: 0, backgrounded: 0, failed: 0 };
const began = performance.now();
let lastSample = began;
for (const [c, client] of clients.entries())
  client.send(`offer ${rate / clients.length} ${c * 1_000_000_000}`);
try {
  for (const phase of PHASES) {
    process.stderr.write(`long run: ${phase.name} (${phase.fault})\n`);
    const phaseBegan = performance.now();
    const stop = await phase.start({ postgres, pool, schema: SCHEMA, rate });
    const lasts = phase.name.startsWith('recovery') ? recoveryMs : phaseMs;
    while (performance.now() - phaseBegan < lasts) {
      await sleep(Math.max(0, lastSample + sampleMs - performance.now()));
      const [ended = 0, failed = 0, inFlight = 0, p50 = 0, p95 = 0, p99 = 0, backgrounded = 0] =
        await sampleClients();
      totals.ended += ended;
      totals.failed += failed;
      totals.backgrounded += backgrounded;
      const now = performance.now();
      const seconds = (now - lastSample) / 1_000;
      lastSample = now;
      const database = await sampleDatabase(pool, SCHEMA, queueSql).catch(() => undefined);
      samples.push({
        t: (now - began) / 1_000,
        phase: phase.name,
        offeredPerSecond: rate,
        endedPerSecond: ended / seconds,
        failedPerSecond: failed / seconds,
        p50Ms: p50,
        p95Ms: p95,
        p99Ms: p99,
        inFlight,
        deadTuples: database?.deadTuples,
        megabytes: database ? database.bytes / 1e6 : undefined,
        database,
      });
      // The short form ends a recovery once it is back: the bound is the phase's length.
      const last = samples.at(-1) as PlottedSample;
      if (values.check && phase.name.startsWith('recovery') && isRecovered(last, cleanP99Of(samples))) break;
    }
    await stop();
  }
} finally {
  for (const client of clients) client.send('offer 0');
}
// What was offered ends: the calls in flight drain, then the store says how every call ended.
const drained = performance.now();
for (;;) {
  const [ended = 0, failed = 0, inFlight = 0, , , , backgrounded = 0] = await sampleClients();
  totals.ended += ended;
  totals.failed += failed;
  totals.backgrounded += backgrounded;
  if (inFlight === 0 || performance.now() - drained > 60_000) break;
  await sleep(500);
}
const statuses = await pool.query<{ status: string; n: string }>(
  `SELECT status, count(*) AS n FROM ${SCHEMA}.calls GROUP BY status ORDER BY status`,
);
await Promise.all([...clients, ...workers].map((role) => role.stop()));
await pool.end();
await postgres.stop();
const summary = {
  rate,
  phaseSeconds: phaseMs / 1_000,
  autovacuum: values.autovacuum,
  naptime: values.naptime ?? '1min (the default)',
  processes: split ? `${clients.length} clients x ${workers.length} workers` : 'one process, both roles',
  /** As the callers heard them: `ended` well, `backgrounded` (the end a notification), or `failed`. */
  callers: totals,
  /** As the store has them, once every call offered has been answered. */
  calls: Object.fromEntries(statuses.rows.map(({ status, n }) => [status, Number(n)])),
  phases: summaryOf(samples, PHASES),
};
mkdirSync(out, { recursive: true });
writeFileSync(join(out, 'samples.json'), `${JSON.stringify(samples, null, 1)}\n`);
writeFileSync(join(out, 'summary.json'), `${JSON.stringify(summary, null, 2)}\n`);
writeFileSync(
  join(out, 'plot.svg'),
  plotRun(
    `Baton on PostgreSQL (${summary.processes}), ${rate} calls/s offered, autovacuum ${values.autovacuum}`,
    samples,
  ),
);
process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
if (values.check) {
  const broken = violations(summary);
  for (const line of broken) process.stderr.write(`long run: ${line}\n`);
  process.exitCode = broken.length > 0 ? 1 : 0;
}
