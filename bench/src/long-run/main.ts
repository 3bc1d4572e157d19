/**
 * The long run: a subject (Baton, or pg-boss or graphile-worker doing the same work with a reply)
 * under a steady offered rate through the phases a production PostgreSQL goes through (an idle
 * transaction holding the horizon, REPEATABLE READ readers, backends killed, a restart past the
 * ride-out, a burst while the connections run out, sustained 1.5x overload, worker processes
 * killed), each followed by a clean stretch to recover in, sampled every few seconds: calls ended,
 * backgrounded, refused and failed, latency end to end and from a call's making to its start (the
 * wait for a worker's claim; bounded histograms in the subject's processes), the queue and its oldest
 * call, dead tuples, table and index size, connections, wait events. Writes
 * `samples.json`, `summary.json` and `plot.svg` to `--out`.
 *
 *   node bench/dist/long-run.js --subject baton --phase-seconds 60 --rate 200 --out /tmp/long-run
 *
 * `--subject pg-boss` or `graphile-worker` runs a peer (on Node 22.18 or later: BENCH_PEER_NODE).
 * `--clients C --workers W`: C calling processes offered the rate between them and W worker
 * processes (1 x 1 by default); `--clients 0 --workers 0`, one process with both roles (no worker
 * to kill: that phase is left out). `--autovacuum tuned` sets the per-table settings under trial
 * before the run (see TUNED); `--naptime 10s` sets the server's `autovacuum_naptime`. `--check`
 * (the short form in CI) ends each recovery once the calls are back, and exits 1 if a bound is
 * broken (see `violations`). `--phases worker-kills,recovery-7` runs only those, after the warm-up
 * and the clean stretch.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { freshDatabase, throwawayPostgres } from '@baton/store-postgres/testing';
import type { RoleProcess } from '../role-process.js';
import { type DatabaseSample, harnessPool, sampleDatabase } from './database.js';
import { PHASES } from './phases.js';
import { type PlottedSample, plotRun } from './plot.js';
import { subjectNamed } from './subjects.js';
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
    subject: { type: 'string', default: 'baton' },
    phases: { type: 'string' },
    clients: { type: 'string', default: '1' },
    workers: { type: 'string', default: '1' },
    out: { type: 'string' },
  },
});
const phaseMs = Number(values['phase-seconds']) * 1_000;
const recoveryMs = Number(values['recovery-seconds'] ?? values['phase-seconds']) * 1_000;
const sampleMs = Number(values['sample-seconds']) * 1_000;
const rate = Number(values.rate);
const out = values.out ?? mkdtempSync(join(tmpdir(), 'baton-long-run-'));
const subject = subjectNamed(values.subject ?? 'baton');
const SCHEMA = subject.schema;

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
const clients = split
  ? await Promise.all(Array.from({ length: Number(values.clients) }, () => subject.start(url, 'caller')))
  : [await subject.start(url, 'both')];
const workers: RoleProcess[] = split
  ? await Promise.all(Array.from({ length: Number(values.workers) }, () => subject.start(url, 'worker')))
  : [];
/** `--phases a,b`: only those (with the warm-up and the clean stretch the recoveries are held to). */
const named = values.phases?.split(',');
const phases = PHASES.filter(
  (phase) =>
    (split || phase.name !== 'worker-kills') &&
    (!named || ['warm-up', 'clean', ...named].includes(phase.name)),
);
/** Offers numbered apart: each client's calls from c x 10^9, each new offer 10^7 further on. */
let offers = 0;
function offer(perSecond: number): void {
  offers++;
  for (const [c, client] of clients.entries())
    client.send(`offer ${perSecond / clients.length} ${c * 1_000_000_000 + offers * 10_000_000}`);
}
const running = () => (workers.length > 0 ? workers : clients);
let replaced = 0;
/** Worker processes that exited of themselves, each started again (not while one is being replaced). */
let restarted = 0;
let replacing = false;
/** Where a figure of the protocol's `sample` is a percentile: the worst process's is kept, the rest summed. */
const PERCENTILES = new Set([3, 4, 5, 8, 9, 10]);
/**
 * Each process's sample (the clients': their calls; the workers': the starts of their jobs),
 * summed, the percentiles the worst process's. A worker that exits before it answers (killed by a
 * phase, or of itself) counts for nothing.
 */
async function sampleRoles(): Promise<number[]> {
  const roles = [...new Set([...clients, ...workers])].filter((role) => role.alive);
  const each = await Promise.all(
    roles.map(async (role) => {
      const answered = role.next('sample');
      role.send('sample');
      const words = await Promise.race([answered, role.exited.then(() => [])]);
      return words.map(Number);
    }),
  );
  return Array.from({ length: 12 }, (_, at) =>
    PERCENTILES.has(at)
      ? Math.max(0, ...each.map((one) => one[at] ?? 0))
      : each.reduce((sum, one) => sum + (one[at] ?? 0), 0),
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
const samples: Array<
  PlottedSample & {
    database: DatabaseSample | undefined;
    inFlight: number;
    p95Ms: number;
    startP95Ms: number;
  }
> = [];
/** The calls the clients heard end well, go to the background, be refused, or fail, over the whole run. */
const totals = { ended: 0, backgrounded: 0, refused: 0, failed: 0 };
const began = performance.now();
let lastSample = began;
offer(rate);
try {
  for (const phase of phases) {
    process.stderr.write(`long run: ${subject.name}: ${phase.name} (${phase.fault})\n`);
    const phaseBegan = performance.now();
    const lasts = phase.name.startsWith('recovery') ? recoveryMs : phaseMs;
    let offered = rate;
    const stop = await phase.start({
      postgres,
      pool,
      table: subject.table,
      rate,
      phaseMs: lasts,
      offer: (perSecond) => {
        offered = perSecond;
        offer(perSecond);
      },
      serviceTime: (ms) => {
        for (const role of running()) role.send(`service ${ms}`);
      },
      slots: subject.slotsPerWorker * running().length,
      async replaceWorker() {
        const at = replaced++ % workers.length;
        replacing = true;
        try {
          await workers[at]?.kill();
          workers[at] = await subject.start(url, 'worker');
        } finally {
          replacing = false;
        }
      },
    });
    while (performance.now() - phaseBegan < lasts) {
      await sleep(Math.max(0, lastSample + sampleMs - performance.now()));
      // A worker process that exited of itself is started again, as its supervisor (systemd, a
      // container's restart policy) would.
      for (const [at, worker] of workers.entries()) {
        if (worker.alive || replacing) continue;
        process.stderr.write(`long run: ${subject.name}: a worker exited; another started\n`);
        restarted++;
        workers[at] = await subject.start(url, 'worker');
      }
      const [
        ended = 0,
        failed = 0,
        inFlight = 0,
        p50 = 0,
        p95 = 0,
        p99 = 0,
        backgrounded = 0,
        refused = 0,
        startP50 = 0,
        startP95 = 0,
        startP99 = 0,
      ] = await sampleRoles();
      totals.ended += ended;
      totals.failed += failed;
      totals.backgrounded += backgrounded;
      totals.refused += refused;
      const now = performance.now();
      const seconds = (now - lastSample) / 1_000;
      lastSample = now;
      const database = await sampleDatabase(pool, SCHEMA, subject.queueSql).catch(() => undefined);
      samples.push({
        t: (now - began) / 1_000,
        phase: phase.name,
        offeredPerSecond: offered,
        endedPerSecond: ended / seconds,
        backgroundedPerSecond: backgrounded / seconds,
        refusedPerSecond: refused / seconds,
        failedPerSecond: failed / seconds,
        p50Ms: p50,
        p95Ms: p95,
        p99Ms: p99,
        startP50Ms: startP50,
        startP95Ms: startP95,
        startP99Ms: startP99,
        inFlight,
        deadTuples: database?.deadTuples,
        megabytes: database ? database.bytes / 1e6 : undefined,
        queued: database?.queued,
        oldestWaitingSeconds: database?.oldestWaitingSeconds,
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
  for (const role of running()) role.send('service 0');
}
// What was offered ends: the calls in flight drain, then the store says how every call ended.
const drained = performance.now();
let lastInFlight = 0;
for (;;) {
  const [ended = 0, failed = 0, inFlight = 0, , , , backgrounded = 0, refused = 0] = await sampleRoles();
  totals.ended += ended;
  totals.failed += failed;
  totals.backgrounded += backgrounded;
  totals.refused += refused;
  lastInFlight = inFlight;
  if (inFlight === 0 || performance.now() - drained > 60_000) break;
  await sleep(500);
}
const statuses = subject.statusesSql
  ? (await pool.query<{ status: string; n: string }>(subject.statusesSql)).rows
  : [];
await Promise.all([...clients, ...workers].map((role) => role.stop()));
await pool.end();
await postgres.stop();
const summary = {
  subject: subject.name,
  rate,
  phaseSeconds: phaseMs / 1_000,
  autovacuum: values.autovacuum,
  naptime: values.naptime ?? '1min (the default)',
  processes: split ? `${clients.length} clients x ${workers.length} workers` : 'one process, both roles',
  /**
   * As the callers heard them: `ended` well, `backgrounded` (the end a notification), `refused`
   * (come back later, nothing kept) or `failed`; and the calls still unanswered when the run gave
   * up waiting for them (a minute after the offer stopped).
   */
  callers: { ...totals, unanswered: lastInFlight },
  workersRestarted: restarted,
  /** As the subject keeps them, once every call offered has been answered (or the wait given up). */
  calls: Object.fromEntries(statuses.map(({ status, n }) => [status, Number(n)])),
  phases: summaryOf(samples, phases),
};
mkdirSync(out, { recursive: true });
writeFileSync(join(out, 'samples.json'), `${JSON.stringify(samples, null, 1)}\n`);
writeFileSync(join(out, 'summary.json'), `${JSON.stringify(summary, null, 2)}\n`);
writeFileSync(
  join(out, 'plot.svg'),
  plotRun(
    `${subject.name} on PostgreSQL (${summary.processes}), ${rate} calls/s offered, autovacuum ${values.autovacuum}`,
    samples,
  ),
);
process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
if (values.check) {
  const broken = violations(summary);
  for (const line of broken) process.stderr.write(`long run: ${line}\n`);
  process.exitCode = broken.length > 0 ? 1 : 0;
}
