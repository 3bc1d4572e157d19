// The line protocol of the PostgreSQL measures' processes (workers/pg-role.mjs, peers/pg-peer.mjs):
//   `run <calls> <inFlight> <offset>`: makes calls numbered from offset, `inFlight` at a time, prints `done`;
//   `report`: prints `report <cpu µs> <queries>` since the last report;
//   `offer <perSecond> <offset>`: makes calls numbered from offset at that steady rate, whatever
//   their answers take (an open loop: the long run's load), until `offer 0`; a call that fails is
//   counted, not fatal, and one answered `backgrounded` (its error says `backgrounded`) apart;
//   `sample`: prints `sample <ended> <failed> <inFlight> <p50 ms> <p95 ms> <p99 ms> <backgrounded>
//   <refused> <start p50 ms> <start p95 ms> <start p99 ms> <started>`: the calls offered that were
//   answered since the last sample (refused: told to come back later, `overloaded` or the store
//   away, with nothing kept; its error says `refused`), and the jobs this process started since,
//   with how long each waited from its caller's making it to its start (the claim's wait);
//   `service <ms>`: each job this process runs from now on takes that long (the long run's
//   overload: the workers' slots held, so that they end fewer calls than are offered);
// `ready` once the process takes work; SIGTERM stops it, as does the end of its input.
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { LatencyHistogram } from './latency-histogram.mjs';

let serviceMs = 0;
/** How long each job started here waited from its making (when its caller said when) to its start. */
const startWaits = new LatencyHistogram();
/**
 * What a job of this process does first: counts how long it waited since `madeAt` (the caller's
 * `Date.now()` when it made the call, carried in its arguments; the processes share a clock), then
 * waits the service time the harness set, if any.
 */
export function jobStarted(madeAt) {
  if (typeof madeAt === 'number') startWaits.record(Math.max(0, Date.now() - madeAt));
  return serviceMs > 0 ? sleep(serviceMs) : Promise.resolve();
}

let queries = 0;
/**
 * Counts every query of the given `pg`'s clients in this process (a store's, a queue's): the
 * process's own copy, which for the peers is their install's. Call before any is made.
 */
export function countQueries(pg) {
  const query = pg.Client.prototype.query;
  pg.Client.prototype.query = function countedQuery(...args) {
    queries++;
    return query.apply(this, args);
  };
}

/**
 * Serves the protocol: `call(i, madeAt)` makes call number i (rejecting if its answer is wrong),
 * carrying `madeAt` (the long run's offered calls: when it was made) for its job's `jobStarted`;
 * `stop()` closes what the process opened.
 */
export function serve({ call, stop }) {
  let cpu = process.cpuUsage();
  let counted = queries;
  async function run(calls, inFlight, offset) {
    let next = 0;
    const lane = async () => {
      while (next < calls) await call(offset + next++);
    };
    await Promise.all(Array.from({ length: Math.min(inFlight, calls) }, lane));
  }
  const latencies = new LatencyHistogram();
  let failed = 0;
  let backgrounded = 0;
  let refused = 0;
  let inFlight = 0;
  let offering;
  function offer(perSecond, offset) {
    clearInterval(offering);
    if (perSecond <= 0) return;
    // Ticks of 10 ms, each making the calls due by then: a steady rate at any speed of the calls.
    let made = 0;
    const began = performance.now();
    offering = setInterval(() => {
      const due = Math.floor(((performance.now() - began) / 1_000) * perSecond);
      for (; made < due; made++) {
        const started = performance.now();
        inFlight++;
        call(offset + made, Date.now())
          .then(
            () => latencies.record(performance.now() - started),
            (error) => {
              if (error?.backgrounded) backgrounded++;
              else if (error?.refused) refused++;
              else failed++;
            },
          )
          .finally(() => inFlight--);
      }
    }, 10);
  }
  const stopped = async () => {
    clearInterval(offering);
    await stop();
    process.exit(0);
  };
  const lines = createInterface({ input: process.stdin });
  // The harness that drives it is gone (its input closed): stop, rather than live on unasked.
  lines.on('close', stopped);
  lines.on('line', (line) => {
    const [command, ...args] = line.split(' ');
    if (command === 'run') {
      const [calls, inFlight, offset] = args.map(Number);
      run(calls, inFlight, offset).then(
        () => process.stdout.write('done\n'),
        (error) => {
          process.stderr.write(`${error.stack}\n`);
          process.exit(1);
        },
      );
    } else if (command === 'offer') {
      const [perSecond, offset] = args.map(Number);
      offer(perSecond, offset);
    } else if (command === 'sample') {
      const [p50, p95, p99] = [0.5, 0.95, 0.99].map((q) => latencies.quantile(q).toFixed(2));
      const [s50, s95, s99] = [0.5, 0.95, 0.99].map((q) => startWaits.quantile(q).toFixed(2));
      process.stdout.write(
        `sample ${latencies.count} ${failed} ${inFlight} ${p50} ${p95} ${p99} ${backgrounded} ${refused} ${s50} ${s95} ${s99} ${startWaits.count}\n`,
      );
      latencies.reset();
      startWaits.reset();
      failed = 0;
      backgrounded = 0;
      refused = 0;
    } else if (command === 'service') {
      serviceMs = Number(args[0]);
    } else if (command === 'report') {
      const used = process.cpuUsage(cpu);
      process.stdout.write(`report ${used.user + used.system} ${queries - counted}\n`);
      cpu = process.cpuUsage();
      counted = queries;
    }
  });
  process.stdout.write('ready\n');
  process.once('SIGTERM', stopped);
}
