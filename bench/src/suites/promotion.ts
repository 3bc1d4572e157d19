import { defineTool } from '@baton/contracts';
import { createRuntime } from '@baton/runtime';
import { z } from 'zod';
import type { BenchConfig } from '../config.js';
import { atMost, heapAfterCollection, percentile, type Row } from '../measure.js';

const BUDGET_MS = 300;

/** With many calls in flight, how late after its budget each `auto` call gets its `backgrounded` reply. */
export async function promotionAccuracy(config: BenchConfig): Promise<Row[]> {
  const p50: number[] = [];
  const p99: number[] = [];
  const max: number[] = [];
  for (let round = 0; round < config.rounds; round++) {
    const releases: Array<() => void> = [];
    const slow = defineTool({
      name: 'slow',
      description: 'outlives its budget',
      input: z.object({}),
      execution: { mode: 'auto' },
      execute: () => new Promise<void>((resolve) => releases.push(resolve)),
    });
    const runtime = createRuntime({
      tools: [slow],
      inlineBudgetMs: BUDGET_MS,
      limits: { concurrency: config.inFlight, backgroundPerWorker: config.inFlight },
    });
    await runtime.ready;
    // What the suites before left on the heap is collected now, not inside the measured window.
    heapAfterCollection();
    const lateness = await Promise.all(
      Array.from({ length: config.inFlight }, async (_, i) => {
        const called = performance.now();
        await runtime.call({ name: 'slow', sessionId: `s${i}` });
        return performance.now() - called - BUDGET_MS;
      }),
    );
    lateness.sort((a, b) => a - b);
    p50.push(percentile(lateness, 50));
    p99.push(percentile(lateness, 99));
    max.push(lateness.at(-1) ?? Number.NaN);
    for (const release of releases) release();
    await runtime.close();
  }
  const measure = `4. promotion lateness, ${config.inFlight} in flight`;
  return [
    { measure, subject: 'p50 after the budget', unit: 'ms', values: p50 },
    { measure, subject: 'p99 after the budget', unit: 'ms', values: p99, target: atMost(5, 'ms') },
    { measure, subject: 'max after the budget', unit: 'ms', values: max },
  ];
}
