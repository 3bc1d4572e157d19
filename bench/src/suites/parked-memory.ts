import type { CallRecord } from '@baton/contracts';
import { defineTool } from '@baton/contracts';
import { createRuntime } from '@baton/runtime';
import { z } from 'zod';
import type { BenchConfig } from '../config.js';
import { atMost, heapAfterCollection, type Row } from '../measure.js';

/** Heap per call parked in `backgrounded`, beside plain objects that hold the same data. */
export async function parkedMemory(config: BenchConfig): Promise<Row[]> {
  const baton: number[] = [];
  const plain: number[] = [];
  for (let round = 0; round < config.rounds; round++) {
    const releases: Array<() => void> = [];
    const waiting = defineTool({
      name: 'waiting',
      description: 'waits in the background',
      input: z.object({ page: z.number() }),
      execution: { mode: 'background' },
      execute: () => new Promise<void>((resolve) => releases.push(resolve)),
    });
    const runtime = createRuntime({
      tools: [waiting],
      limits: {
        concurrency: config.parked,
        backgroundPerSession: config.parked,
        backgroundPerWorker: config.parked,
        // Every parked call runs (and waits) in the one session it measures.
        runningPerSession: config.parked,
      },
    });
    await runtime.ready;
    const before = heapAfterCollection();
    const replies = [];
    for (let i = 0; i < config.parked; i++)
      replies.push(runtime.call({ name: 'waiting', args: { page: i }, sessionId: 's' }));
    await Promise.all(replies);
    baton.push((heapAfterCollection() - before) / config.parked);
    for (const release of releases) release();
    await runtime.close();

    const start = heapAfterCollection();
    const records: CallRecord[] = Array.from({ length: config.parked }, (_, i) => ({
      callId: `01934f4e-8d2a-7000-8000-${String(i).padStart(12, '0')}`,
      sessionId: 's',
      toolName: 'waiting',
      args: { page: i },
      status: 'backgrounded',
      mode: 'background',
      detached: true,
      attempt: 1,
      ownerId: '01934f4e-8d2a-7000-8000-000000000000',
      createdAt: Date.now(),
      startedAt: Date.now(),
      outputTail: '',
    }));
    plain.push((heapAfterCollection() - start) / records.length);
    // Still needed up to here, so that the collection above could not take the records.
    records.length = 0;
  }
  const measure = `5. memory per call parked in backgrounded (${config.parked})`;
  return [
    {
      measure,
      subject: 'Baton',
      unit: 'bytes',
      values: baton,
      comparedWith: 'plain object, same data',
      target: atMost(3_072, 'bytes'),
    },
    { measure, subject: 'plain object, same data', unit: 'bytes', values: plain },
  ];
}
