/**
 * `npm run bench`: what Baton costs and how far it carries, each measure beside a baseline run in
 * the same process and minute (these machines are shared and noisy: read the ratios and medians).
 * `--smoke` runs one short round of everything, as CI does, so that the bench cannot rot.
 * `--only 1,4,5` runs those measures alone (results/partial.json), for a change that touches them.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { benchConfig } from './config.js';
import { atLeast, type Row, summarize } from './measure.js';
import { bodyShape } from './suites/body-shape.js';
import { BULLMQ_REPLY, bullmq } from './suites/bullmq.js';
import { busFanOut } from './suites/bus-fanout.js';
import { garbagePerCall } from './suites/garbage.js';
import { inlineInMemory } from './suites/inline-memory.js';
import { mcpOverHttp } from './suites/mcp-http.js';
import { parkedMemory } from './suites/parked-memory.js';
import { pgPeers } from './suites/pg-peers.js';
import { throughPostgres } from './suites/postgres.js';
import { postgresParts } from './suites/postgres-parts.js';
import { promotionAccuracy } from './suites/promotion.js';
import { throughStores } from './suites/sqlite.js';

const smoke = process.argv.includes('--smoke');
const onlyAt = process.argv.indexOf('--only');
const only = onlyAt === -1 ? undefined : new Set((process.argv[onlyAt + 1] ?? '').split(','));
/** Whether measure `n` runs this time. */
const runs = (n: number) => only === undefined || only.has(String(n));
const config = benchConfig(smoke);
const started = Date.now();
const rows: Row[] = [];
const notes: string[] = [];

const log = (text: string) => process.stderr.write(`bench: ${text}\n`);
log(`${smoke ? 'smoke round' : `${config.rounds} rounds`}, ${config.calls} calls per throughput round`);

if (runs(1)) {
  log('1. inline calls in memory');
  rows.push(...(await inlineInMemory(config)));
}
if (runs(2)) {
  log('2. inline calls through SQLite');
  rows.push(...(await throughStores(config)));
}
if (runs(3)) {
  log('3. BullMQ on a local Redis');
  const peer = await bullmq(config);
  if (typeof peer === 'string') notes.push(`3. BullMQ ${peer}`);
  else rows.push(...peer);
}
if (runs(4)) {
  log('4. promotion accuracy');
  rows.push(...(await promotionAccuracy(config)));
}
if (runs(5)) {
  log('5. memory per parked call');
  rows.push(...(await parkedMemory(config)));
}
if (runs(6)) {
  log('6. bus fan-out');
  rows.push(...(await busFanOut(config)));
}
if (runs(7)) {
  log('7. inline calls through PostgreSQL: one process, then a client and worker processes');
  rows.push(...(await throughPostgres(config)));
  log("7. PostgreSQL's CPU for each part of a call: Baton's writes replayed one at a time");
  rows.push(...(await postgresParts(config)));
}

if (runs(8)) {
  log(
    '8. the PostgreSQL job queues and durable workflows, with reply: Baton beside pg-boss, graphile-worker and DBOS Transact',
  );
  const peers = await pgPeers(config);
  if (typeof peers === 'string') notes.push(`8. the peers ${peers}`);
  else rows.push(...peers);
}
if (runs(9)) {
  log('9. MCP tools/call over HTTP: Baton beside a bare SDK server');
  rows.push(...(await mcpOverHttp(config)));
}
if (runs(10)) {
  log('10. garbage per call');
  rows.push(...(await garbagePerCall(config)));
}
if (runs(12)) {
  log('12. a body read for its shape before it is parsed');
  rows.push(...(await bodyShape(config)));
}

// Baton beside the peer, round by round: against BullMQ doing the same work (each call awaited),
// with Redis keeping nothing and with its append-only file.
for (const peerSubject of Object.values(BULLMQ_REPLY)) {
  const peerRow = rows.find((row) => row.subject === peerSubject);
  if (!peerRow) continue;
  const redis = peerSubject.replace(/^BullMQ with reply, (.*) \(.*$/, '$1');
  for (const row of rows.filter(
    (candidate) =>
      /^[12]\. /.test(candidate.measure) &&
      candidate.unit === 'calls/s' &&
      candidate.subject.startsWith('Baton'),
  )) {
    const store = row.measure.replace(/^\d\. inline call, /, '');
    rows.push({
      measure: '3. the peer: durable jobs',
      subject: `${store} / BullMQ with reply, ${redis}`,
      unit: 'x',
      values: row.values.map((value, i) => value / (peerRow.values[i] ?? Number.NaN)),
      ...(store.startsWith('SQLite (WAL, synchronous normal)') ? { target: atLeast(2, 'x') } : {}),
    });
  }
}

function format(value: number): string {
  if (!Number.isFinite(value)) return '-';
  if (Math.abs(value) >= 1_000) return Math.round(value).toLocaleString('en-US');
  return value.toFixed(Math.abs(value) >= 10 ? 1 : 2);
}

/** A ratio readable at any size: 4.95x, or 1/112 for a subject far slower than its baseline. */
function formatRatio(ratio: number): string {
  return ratio >= 0.1 ? `${ratio.toFixed(2)}x` : `1/${Math.round(1 / ratio)} of`;
}

const table = rows.map((row) => {
  const summary = summarize(row.values);
  const baseline = row.comparedWith
    ? rows.find((other) => other.measure === row.measure && other.subject === row.comparedWith)
    : undefined;
  const baselineMedian = baseline ? summarize(baseline.values).median : undefined;
  const verdict = row.target?.check(summary.median, baselineMedian);
  return {
    measure: row.measure,
    subject: row.subject,
    unit: row.unit,
    ...summary,
    values: row.values,
    ...(baseline && baselineMedian
      ? { versus: row.comparedWith, ratio: summary.median / baselineMedian }
      : {}),
    ...(row.target
      ? { target: row.target.text, met: verdict?.met, gap: verdict?.met ? undefined : verdict?.gap }
      : {}),
  };
});

const lines = [
  '| measure | subject | median | min | max | unit | ratio | target | |',
  '| --- | --- | ---: | ---: | ---: | --- | --- | --- | --- |',
  ...table.map(
    (row) =>
      `| ${row.measure} | ${row.subject} | ${format(row.median)} | ${format(row.min)} | ${format(row.max)} | ${row.unit} | ${
        row.ratio === undefined ? '' : `${formatRatio(row.ratio)} ${row.versus}`
      } | ${row.target ?? ''} | ${row.met === undefined ? '' : row.met ? 'met' : `not met (${row.gap})`} |`,
  ),
];
process.stdout.write(`${lines.join('\n')}\n`);
for (const note of notes) process.stdout.write(`\n${note}\n`);

let commit = 'unknown';
try {
  commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
} catch {}
const results = {
  date: new Date().toISOString(),
  commit,
  node: process.version,
  smoke,
  config,
  seconds: (Date.now() - started) / 1_000,
  rows: table,
  notes,
};
const dir = join(import.meta.dirname, '..', 'results');
mkdirSync(dir, { recursive: true });
const file = smoke ? 'smoke.json' : only ? 'partial.json' : 'latest.json';
writeFileSync(join(dir, file), `${JSON.stringify(results, null, 2)}\n`);
log(`done in ${results.seconds.toFixed(0)} s; results/${file} written`);
