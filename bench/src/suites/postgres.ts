import { postgresStore } from '@baton/store-postgres';
import { throwawayPostgres } from '@baton/store-postgres/testing';
import pg from 'pg';
import type { BenchConfig } from '../config.js';
import { captureWrites, postgresLimit } from '../limit.js';
import { atMost, type Row, ratioAtLeast } from '../measure.js';
import { reports, startRole, warmUp } from '../role-process.js';
import { serverCpuMeter } from '../server-cpu.js';
import { LIMIT } from './sqlite.js';

const MEASURE = '7. inline call through PostgreSQL';

/** The environment of a Baton process of the measure (`workers/pg-role.mjs`). */
export function roleEnv(
  url: string,
  schema: string,
  role: 'client' | 'worker' | 'both',
): Record<string, string> {
  return { BATON_PG_URL: url, BATON_PG_SCHEMA: schema, ROLE: role };
}

/** A configuration of the measure: one process with both roles, or C client and W worker processes. */
interface Setup {
  subject: string;
  clients: number;
  workers: number;
  /** One process that runs its own calls. */
  both?: boolean;
}

/**
 * Inline calls through PostgreSQL, every call recorded and every reply read back from the
 * database: one process that runs its own calls, then C client processes whose calls W worker
 * processes run (`BENCH_PG_CLIENTS`, `BENCH_PG_WORKERS`; 2 x 2 by default, for two cores). Each
 * round also reports CPU µs per call for each role (`process.cpuUsage()` over the round, divided
 * by its calls), the PostgreSQL server's (where /proc shows it) and database queries per call:
 * figures that hold on a busy machine where throughput does not. Each client makes `pgWarmup`
 * calls, not measured, then `pgCalls`.
 */
export async function throughPostgres(config: BenchConfig): Promise<Row[]> {
  const server = await throwawayPostgres();
  const calls = config.pgCalls;
  const rows: Row[] = [];
  let schemas = 0;
  const setups: Setup[] = [
    { subject: 'one process (both roles)', clients: 1, workers: 0, both: true },
    { subject: '1 client x 1 worker (processes)', clients: 1, workers: 1 },
    {
      subject: `${config.pgClients} clients x ${config.pgWorkers} workers (processes)`,
      clients: config.pgClients,
      workers: config.pgWorkers,
    },
  ];
  const results = setups.map(() => ({
    perSecond: [] as number[],
    clientUs: [] as number[],
    workerUs: [] as number[],
    serverUs: [] as number[],
    queries: [] as number[],
  }));
  const limit: number[] = [];
  const serverCpu = await serverCpuMeter(server.url);
  const admin = new pg.Client({ connectionString: server.url });
  await admin.connect();
  try {
    // What one process writes for these calls, captured once, for the limit.
    const captureSchema = `bench_${process.pid}_capture`;
    const captured = await captureWrites(
      postgresStore({ connectionString: server.url, schema: captureSchema }),
      calls,
      config.inFlight,
    );
    await admin.query(`DROP SCHEMA ${captureSchema} CASCADE`);
    // Rounds alternate between the setups and the limit, each on a fresh schema.
    for (let round = 0; round < config.rounds; round++) {
      limit.push(await postgresLimit(captured, server.url, `bench_${process.pid}_${schemas++}`));
      for (const [index, setup] of setups.entries()) {
        const schema = `bench_${process.pid}_${schemas++}`;
        const workers = await Promise.all(
          Array.from({ length: setup.workers }, () =>
            startRole({ script: 'workers/pg-role.mjs', env: roleEnv(server.url, schema, 'worker') }),
          ),
        );
        const clients = await Promise.all(
          Array.from({ length: setup.clients }, () =>
            startRole({
              script: 'workers/pg-role.mjs',
              env: roleEnv(server.url, schema, setup.both ? 'both' : 'client'),
            }),
          ),
        );
        try {
          // Each client warms up and is measured over as many calls as a lone client: what a
          // process spends on a call depends on how many it has made (the JIT's warm-up) and on
          // how long the round is, not on how many processes share the work.
          const inFlight = Math.max(1, Math.ceil(config.inFlight / clients.length));
          await warmUp(clients, config.pgWarmup, inFlight);
          await reports([...clients, ...workers]);
          const serverBefore = serverCpu?.() ?? Number.NaN;
          const started = performance.now();
          await Promise.all(
            clients.map((client, c) => {
              const done = client.next('done');
              client.send(`run ${calls} ${inFlight} ${c * calls}`);
              return done;
            }),
          );
          const seconds = (performance.now() - started) / 1_000;
          const serverUs = (serverCpu?.() ?? Number.NaN) - serverBefore;
          const total = calls * clients.length;
          const used = { clients: await reports(clients), workers: await reports(workers) };
          const result = results[index] as (typeof results)[number];
          result.perSecond.push(total / seconds);
          result.clientUs.push(used.clients.cpuUs / total);
          if (!setup.both) result.workerUs.push(used.workers.cpuUs / total);
          result.serverUs.push(serverUs / total);
          result.queries.push((used.clients.queries + used.workers.queries) / total);
        } finally {
          await Promise.all([...clients, ...workers].map((role) => role.stop()));
          // Gone with its round: the next setups would share the server with its autovacuum.
          await admin.query(`DROP SCHEMA ${schema} CASCADE`);
        }
      }
    }
  } finally {
    await admin.end();
    await server.stop();
  }
  const onePerSecond = results[0]?.perSecond ?? [];
  rows.push(
    { measure: MEASURE, subject: LIMIT, unit: 'calls/s', values: limit },
    {
      measure: MEASURE,
      subject: 'one process / the limit',
      unit: 'x',
      values: onePerSecond.map((value, i) => value / (limit[i] ?? Number.NaN)),
    },
  );
  for (const [index, setup] of setups.entries()) {
    const result = results[index] as (typeof results)[number];
    rows.push({
      measure: MEASURE,
      subject: setup.subject,
      unit: 'calls/s',
      values: result.perSecond,
      ...(setup.both ? {} : { comparedWith: 'one process (both roles)' }),
      // Scale-out: as many processes as cores, doing most of what one process does on them.
      ...(setup.clients > 1 ? { target: ratioAtLeast(0.6) } : {}),
    });
    if (setup.both) {
      rows.push({
        measure: MEASURE,
        subject: `${setup.subject}: CPU per call`,
        unit: 'µs',
        values: result.clientUs,
      });
    } else {
      rows.push(
        {
          measure: MEASURE,
          subject: `${setup.subject}: client CPU per call`,
          unit: 'µs',
          values: result.clientUs,
          target: atMost(35, 'µs'),
        },
        {
          measure: MEASURE,
          subject: `${setup.subject}: worker CPU per call`,
          unit: 'µs',
          values: result.workerUs,
          target: atMost(70, 'µs'),
        },
      );
    }
    if (serverCpu) {
      rows.push({
        measure: MEASURE,
        subject: `${setup.subject}: PostgreSQL CPU per call`,
        unit: 'µs',
        values: result.serverUs,
        // The split path's cost to the database, which all processes share: near one process's.
        ...(setup.both ? {} : { target: atMost(45, 'µs') }),
      });
    }
    rows.push({
      measure: MEASURE,
      subject: `${setup.subject}: queries per call`,
      unit: 'queries',
      values: result.queries,
    });
  }
  return rows;
}
