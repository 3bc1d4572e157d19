import { defineTool } from '@baton/contracts';
import { createRuntime } from '@baton/runtime';
import { memoryStore } from '@baton/store';
import PQueue from 'p-queue';
import { z } from 'zod';
import type { BenchConfig } from '../config.js';
import { atLeast, atMost, latencies, percentile, type Row, throughput } from '../measure.js';

const MEASURE = '1. inline call, in memory';

/** The trivial tool: what Baton adds to it is the overhead measured. */
async function addOne({ i }: { i: number }): Promise<number> {
  return i + 1;
}

export async function inlineInMemory(config: BenchConfig): Promise<Row[]> {
  const store = memoryStore();
  const tool = defineTool({
    name: 'add_one',
    description: 'adds one',
    input: z.object({ i: z.number() }),
    execute: addOne,
  });
  const runtime = createRuntime({ tools: [tool], store });
  const call = (i: number) => runtime.call({ name: 'add_one', args: { i }, sessionId: `s${i % 16}` });
  const queue = new PQueue({ concurrency: 64 });

  const baton: number[] = [];
  const direct: number[] = [];
  const pQueue: number[] = [];
  const batonP50: number[] = [];
  const batonP99: number[] = [];
  const directP50: number[] = [];
  const overheadP50: number[] = [];
  for (let round = 0; round < config.rounds; round++) {
    direct.push(await throughput(config.calls, 64, (i) => addOne({ i })));
    baton.push(await throughput(config.calls, 64, call));
    const started = performance.now();
    await Promise.all(Array.from({ length: config.calls }, (_, i) => queue.add(() => addOne({ i }))));
    pQueue.push(config.calls / ((performance.now() - started) / 1_000));
    const directLatency = await latencies(config.sequential, (i) => addOne({ i }));
    const batonLatency = await latencies(config.sequential, call);
    directP50.push(percentile(directLatency, 50));
    batonP50.push(percentile(batonLatency, 50));
    batonP99.push(percentile(batonLatency, 99));
    overheadP50.push(percentile(batonLatency, 50) - percentile(directLatency, 50));
    // Keep what the records weigh out of the next round.
    await store.deleteEndedBefore(Number.POSITIVE_INFINITY);
  }
  await runtime.close();
  return [
    {
      measure: MEASURE,
      subject: 'Baton (64 in flight)',
      unit: 'calls/s',
      values: baton,
      comparedWith: 'direct await',
      target: atLeast(25_000, 'calls/s'),
    },
    { measure: MEASURE, subject: 'direct await', unit: 'calls/s', values: direct },
    {
      measure: MEASURE,
      subject: 'p-queue (concurrency 64)',
      unit: 'calls/s',
      values: pQueue,
      comparedWith: 'direct await',
    },
    {
      measure: MEASURE,
      subject: 'Baton latency p50',
      unit: 'µs',
      values: batonP50,
      comparedWith: 'direct latency p50',
    },
    { measure: MEASURE, subject: 'Baton latency p99', unit: 'µs', values: batonP99 },
    { measure: MEASURE, subject: 'direct latency p50', unit: 'µs', values: directP50 },
    {
      measure: MEASURE,
      subject: 'Baton overhead p50',
      unit: 'µs',
      values: overheadP50,
      target: atMost(40, 'µs'),
    },
  ];
}
