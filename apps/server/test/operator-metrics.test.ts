import { BatonError, defineTool } from '@baton/contracts';
import { createRuntime } from '@baton/runtime';
import { deferred, SimulatedClock } from '@baton/runtime/testing';
import { memoryStore } from '@baton/store';
import { postgresStore } from '@baton/store-postgres';
import { type ThrowawayPostgres, throwawayPostgres } from '@baton/store-postgres/testing';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { kindOf } from '../src/metrics.js';
import { createServer } from '../src/server.js';

let postgres: ThrowawayPostgres;
beforeAll(async () => {
  postgres = await throwawayPostgres();
}, 60_000);
afterAll(() => postgres?.stop());

/** A metric's value in a scrape, or undefined when it has none. */
function seriesValue(scrape: string, series: string): number | undefined {
  const line = scrape.split('\n').find((row) => row.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe("what an operator reads of a server's store and workers", () => {
  it('times the wait of each call for its start: two seconds for one that waited behind another', async () => {
    const clock = new SimulatedClock();
    const gates = [deferred<string>(), deferred<string>()];
    let runs = 0;
    const gated = defineTool({
      name: 'gated',
      description: 'waits for its gate',
      input: z.object({}),
      execute: () => (gates[runs++] as (typeof gates)[number]).promise,
    });
    const runtime = createRuntime({ tools: [gated], clock, limits: { concurrency: 1 } });
    const server = createServer({ runtime });
    // The metrics follow the runtime's events from the server's start on.
    await server.ready();
    const first = runtime.call({ name: 'gated', args: {}, sessionId: 's' });
    const second = runtime.call({ name: 'gated', args: {}, sessionId: 's' });
    await vi.waitFor(() => expect(runs).toBe(1));
    clock.increment(2_000);
    gates[0]?.resolve('one');
    await vi.waitFor(() => expect(runs).toBe(2));
    gates[1]?.resolve('two');
    await Promise.all([first, second]);
    const scrape = (await server.inject('/metrics')).body;
    expect(seriesValue(scrape, 'baton_call_start_wait_seconds_count{tool="gated"}')).toBe(2);
    expect(seriesValue(scrape, 'baton_call_start_wait_seconds_sum{tool="gated"}')).toBe(2);
    expect(seriesValue(scrape, 'baton_call_start_wait_seconds_bucket{le="1",tool="gated"}')).toBe(1);
    await server.close();
    await runtime.close();
  });

  it("counts the store's failures by the driver's code, and a failure without one by its Baton code", async () => {
    const store = memoryStore();
    const away = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    store.queueDepth = () =>
      Promise.reject(new BatonError('persistence_failed', away.message, { cause: away }));
    const runtime = createRuntime({ tools: [], store });
    const server = createServer({ runtime });
    await server.inject('/metrics');
    // Two gauges read the queue's depth, after the failures are told: the next scrape has both.
    const scrape = (await server.inject('/metrics')).body;
    expect(
      seriesValue(scrape, 'baton_runtime_failures_total{op="read_queue_depth",kind="ECONNREFUSED"}'),
    ).toBe(2);
    expect(kindOf(new BatonError('persistence_failed', 'disk full'))).toBe('persistence_failed');
    expect(kindOf(Object.assign(new Error('terminating connection'), { code: '57P01' }))).toBe('57P01');
    expect(kindOf(new Error('no code'))).toBe('other');
    // A code that is not a code (a driver's free text) never becomes a label.
    expect(kindOf(Object.assign(new Error('x'), { code: 'a message, with spaces' }))).toBe('other');
    await server.close();
    await runtime.close();
  });

  it("shows the PostgreSQL store's connections in use, idle and waiting; a SQLite server shows none", async () => {
    const store = postgresStore({ connectionString: postgres.url, schema: `metrics_${process.pid}` });
    const runtime = createRuntime({ tools: [], store });
    await runtime.ready;
    const server = createServer({ runtime });
    const scrape = (await server.inject('/metrics')).body;
    expect(seriesValue(scrape, 'baton_store_connections{state="in_use"}')).toBeGreaterThanOrEqual(0);
    expect(seriesValue(scrape, 'baton_store_connections{state="idle"}')).toBeGreaterThan(0);
    expect(seriesValue(scrape, 'baton_store_connections{state="waiting"}')).toBe(0);
    await server.close();
    await runtime.close();
    const alone = createRuntime({ tools: [] });
    const sqliteServer = createServer({ runtime: alone });
    expect((await sqliteServer.inject('/metrics')).body).not.toMatch(/^baton_store_connections\{/m);
    await sqliteServer.close();
    await alone.close();
  });
});
