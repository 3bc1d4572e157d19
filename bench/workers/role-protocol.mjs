// The line protocol of the PostgreSQL measures' processes (workers/pg-role.mjs, peers/pg-peer.mjs):
//   `run <calls> <inFlight> <offset>`: makes calls numbered from offset, `inFlight` at a time, prints `done`;
//   `report`: prints `report <cpu µs> <queries>` since the last report;
// `ready` once the process takes work; SIGTERM stops it.
import { createInterface } from 'node:readline';

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
 * Serves the protocol: `call(i)` makes call number i (rejecting if its answer is wrong), `stop()`
 * closes what the process opened.
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
  createInterface({ input: process.stdin }).on('line', (line) => {
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
    } else if (command === 'report') {
      const used = process.cpuUsage(cpu);
      process.stdout.write(`report ${used.user + used.system} ${queries - counted}\n`);
      cpu = process.cpuUsage();
      counted = queries;
    }
  });
  process.stdout.write('ready\n');
  process.once('SIGTERM', async () => {
    await stop();
    process.exit(0);
  });
}
