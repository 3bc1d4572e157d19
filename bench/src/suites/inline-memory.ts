import { createRuntime } from '@baton/runtime';
import { memoryStore } from '@baton/store';
import PQueue from 'p-queue';
import { addOne, addOneTool, callAddOne } from '../add-one.js';
import type { BenchConfig } from '../config.js';
import { atLeast, atMost, latencies, percentile, type Row, throughput } from '../measure.js';

const MEASURE = '1. inline call, in memory';

export async function inlineInMemory(config: BenchConfig): Promise<Row[]> {
  const store = memoryStore();
  const runtime = createRuntime({ tools: [addOneTool], store });
  const call = (i: number) => callAddOne(runtime, i);
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
