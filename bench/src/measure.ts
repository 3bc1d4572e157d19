/** Measurement helpers: rounds, medians with min and max, percentiles, and the heap after a collection. */

export interface Summary {
  median: number;
  min: number;
  max: number;
}

export function summarize(values: readonly number[]): Summary {
  const sorted = [...values].sort((a, b) => a - b);
  return { median: percentile(sorted, 50), min: sorted[0] ?? Number.NaN, max: sorted.at(-1) ?? Number.NaN };
}

/** Nearest-rank percentile of sorted values. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] as number;
}

export function heapAfterCollection(): number {
  const collect = (globalThis as { gc?: () => void }).gc;
  if (!collect) throw new Error('run the bench with node --expose-gc');
  collect();
  collect();
  return process.memoryUsage().heapUsed;
}

/** Runs `work` with at most `window` calls in flight until `total` are done; returns calls per second. */
export async function throughput(
  total: number,
  window: number,
  work: (i: number) => Promise<unknown>,
): Promise<number> {
  let next = 0;
  const started = performance.now();
  const lane = async () => {
    while (next < total) await work(next++);
  };
  await Promise.all(Array.from({ length: Math.min(window, total) }, lane));
  return total / ((performance.now() - started) / 1_000);
}

/** Sequential calls, one at a time: the latency of each, in microseconds, sorted. */
export async function latencies(total: number, work: (i: number) => Promise<unknown>): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < total; i++) {
    const started = performance.now();
    await work(i);
    samples.push((performance.now() - started) * 1_000);
  }
  return samples.sort((a, b) => a - b);
}

/** One line of the results table: what one subject measured, round by round. */
export interface Row {
  measure: string;
  subject: string;
  unit: string;
  values: number[];
  /** The subject of the row this one is compared with (same measure): its ratio is printed. */
  comparedWith?: string;
  target?: Target;
}

export interface Target {
  text: string;
  /** Whether the median meets it, and by how much it misses when it does not. */
  check(median: number, baseline?: number): { met: boolean; gap?: string };
}

export const atLeast = (value: number, unit: string): Target => ({
  text: `>= ${value.toLocaleString('en-US')} ${unit}`,
  check: (median) => ({ met: median >= value, gap: `${((1 - median / value) * 100).toFixed(0)}% short` }),
});

export const atMost = (value: number, unit: string): Target => ({
  text: `<= ${value.toLocaleString('en-US')} ${unit}`,
  check: (median) => ({ met: median <= value, gap: `${((median / value - 1) * 100).toFixed(0)}% over` }),
});

export const ratioAtLeast = (ratio: number): Target => ({
  text: `>= ${ratio}x the baseline`,
  check: (median, baseline) => {
    const actual = baseline ? median / baseline : Number.NaN;
    return { met: actual >= ratio, gap: `${actual.toFixed(2)}x` };
  },
});

export const ratioAtMost = (ratio: number): Target => ({
  text: `<= ${ratio}x the baseline`,
  check: (median, baseline) => {
    const actual = baseline ? median / baseline : Number.NaN;
    return { met: actual <= ratio, gap: `${actual.toFixed(2)}x` };
  },
});
