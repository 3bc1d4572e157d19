import { mkdtempSync, rmSync } from 'node:fs';
import { type HeapProfiler, Session } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRuntime } from '@baton/runtime';
import { memoryStore, type Store } from '@baton/store';
import { sqliteStore } from '@baton/store-sqlite';
import { addOne, addOneTool, callAddOne } from '../add-one.js';
import type { BenchConfig } from '../config.js';
import { type Row, throughput } from '../measure.js';

const MEASURE = '10. garbage per call';

/** V8's sampling heap profiler takes one allocation in about this many bytes, and scales. */
const SAMPLING_BYTES = 512;

/** The bytes of a profile's allocations: its node's, and its callees'. */
function totalBytes(node: HeapProfiler.SamplingHeapProfileNode): number {
  let total = node.selfSize;
  for (const child of node.children) total += totalBytes(child);
  return total;
}

/**
 * Bytes allocated while `work` runs, the collected included: what the collector will have to
 * sweep. V8's sampling heap profiler counts them without slowing every allocation; unlike calls
 * per second, the figure holds on a busy machine.
 */
async function allocatedDuring(session: Session, work: () => Promise<unknown>): Promise<number> {
  await session.post('HeapProfiler.startSampling', {
    samplingInterval: SAMPLING_BYTES,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  try {
    await work();
  } catch (error) {
    await session.post('HeapProfiler.stopSampling');
    throw error;
  }
  const { profile } = await session.post('HeapProfiler.stopSampling');
  return totalBytes(profile.head);
}

/**
 * Bytes allocated per inline call, 1,000 in flight, in memory and on SQLite, beside the bench's own
 * loop calling the tool directly: the garbage a call leaves, which its share of the collector's
 * time follows (the collector is about 30% of a call's CPU in memory, in a CPU profile).
 */
export async function garbagePerCall(config: BenchConfig): Promise<Row[]> {
  const session = new Session();
  session.connect();
  const dir = mkdtempSync(join(tmpdir(), 'baton-bench-garbage-'));
  const subjects: Array<[string, () => Store]> = [
    ['Baton in memory', () => memoryStore()],
    ['Baton on SQLite (WAL, synchronous normal)', () => sqliteStore({ path: join(dir, 'garbage.db') })],
  ];
  const direct: number[] = [];
  const results = new Map(subjects.map(([subject]) => [subject, [] as number[]]));
  try {
    for (const [subject, open] of subjects) {
      const store = open();
      const runtime = createRuntime({ tools: [addOneTool], store });
      await runtime.ready;
      const call = (i: number) => callAddOne(runtime, i);
      // Warm: the first calls compile code, and what compiling allocates is not a call's.
      await throughput(config.calls, config.inFlight, call);
      for (let round = 0; round < config.rounds; round++) {
        const bytes = await allocatedDuring(session, () => throughput(config.calls, config.inFlight, call));
        results.get(subject)?.push(bytes / config.calls);
        // The memory store keeps every call: what they weigh stays out of the next round.
        await store.deleteEndedBefore(Number.POSITIVE_INFINITY);
      }
      await runtime.close();
    }
    const directly = () => throughput(config.calls, config.inFlight, (i) => addOne({ i }));
    await directly();
    for (let round = 0; round < config.rounds; round++) {
      direct.push((await allocatedDuring(session, directly)) / config.calls);
    }
  } finally {
    session.disconnect();
    rmSync(dir, { recursive: true, force: true });
  }
  const subject = (name: string) => `${name} (${config.inFlight} in flight)`;
  const baseline = subject('direct await');
  return [
    ...subjects.map(
      ([name]): Row => ({
        measure: MEASURE,
        subject: subject(name),
        unit: 'bytes',
        values: results.get(name) ?? [],
        comparedWith: baseline,
      }),
    ),
    { measure: MEASURE, subject: baseline, unit: 'bytes', values: direct },
  ];
}
