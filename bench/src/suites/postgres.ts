import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { defineTool } from '@baton/contracts';
import { createRuntime, type RuntimeRole } from '@baton/runtime';
import { postgresStore } from '@baton/store-postgres';
import { throwawayPostgres } from '@baton/store-postgres/testing';
import { z } from 'zod';
import type { BenchConfig } from '../config.js';
import { type Row, throughput } from '../measure.js';

const addOne = defineTool({
  name: 'add_one',
  description: 'adds one',
  input: z.object({ i: z.number() }),
  execute: async ({ i }) => i + 1,
});

/** Starts a worker process on the schema; resolves with a function that stops it. */
async function startWorker(url: string, schema: string): Promise<() => Promise<void>> {
  const child = spawn(process.execPath, [join(import.meta.dirname, '..', 'workers', 'pg-worker.mjs')], {
    env: { ...process.env, BATON_PG_URL: url, BATON_PG_SCHEMA: schema },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  for await (const line of createInterface({ input: child.stdout })) if (line === 'ready') break;
  child.stdout.resume();
  return async () => {
    child.kill('SIGTERM');
    await exited;
  };
}

/**
 * Inline calls through PostgreSQL: one process that runs its own calls (`both`), and a client
 * process whose calls 1, 2 and 4 worker processes run, every reply crossing the database.
 */
export async function throughPostgres(config: BenchConfig): Promise<Row[]> {
  const server = await throwawayPostgres();
  const calls = Math.min(config.calls, config.smoke ? 500 : 10_000);
  const rows: Row[] = [];
  let schemas = 0;
  const measure = async (subject: string, role: RuntimeRole, workers: number) => {
    const schema = `bench_${process.pid}_${schemas++}`;
    const store = postgresStore({ connectionString: server.url, schema, maxConnections: 10 });
    const runtime = createRuntime({ tools: [addOne], store, role, inlineBudgetMs: 60_000 });
    await runtime.ready;
    const stops = await Promise.all(Array.from({ length: workers }, () => startWorker(server.url, schema)));
    const call = (i: number) => runtime.call({ name: 'add_one', args: { i }, sessionId: `s${i % 16}` });
    const perSecond: number[] = [];
    try {
      for (let round = 0; round < config.rounds; round++) {
        perSecond.push(await throughput(calls, config.inFlight, call));
      }
    } finally {
      await Promise.all(stops.map((stop) => stop()));
      await runtime.close();
    }
    rows.push({
      measure: '7. inline call through PostgreSQL',
      subject,
      unit: 'calls/s',
      values: perSecond,
      ...(subject.startsWith('one process') ? {} : { comparedWith: 'one process (both roles)' }),
    });
  };
  try {
    await measure('one process (both roles)', 'both', 0);
    for (const workers of [1, 2, 4]) {
      await measure(`client + ${workers} worker process${workers === 1 ? '' : 'es'}`, 'client', workers);
    }
  } finally {
    await server.stop();
  }
  return rows;
}
