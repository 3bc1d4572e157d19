import { Queue, Worker } from 'bullmq';
import type { BenchConfig } from '../config.js';
import type { Row } from '../measure.js';
import { ensureRedisServer, startRedis } from '../redis.js';

export const BULLMQ = 'BullMQ (Redis, worker concurrency 64)';

/** The peer a user would pick instead: no-op jobs through BullMQ on a local Redis. */
export async function bullmq(config: BenchConfig): Promise<Row[] | string> {
  if (!ensureRedisServer()) return 'skipped: redis-server is not installed and cannot be installed here';
  const redis = await startRedis();
  const connection = { host: '127.0.0.1', port: redis.port, maxRetriesPerRequest: null };
  const queue = new Queue('bench', { connection });
  let completed = 0;
  let roundDone: () => void = () => {};
  let roundFailed: (error: Error) => void = () => {};
  let roundTotal = 0;
  const worker = new Worker('bench', async (job) => (job.data as { i: number }).i + 1, {
    connection,
    concurrency: 64,
  });
  worker.on('completed', () => {
    completed++;
    if (completed === roundTotal) roundDone();
  });
  worker.on('error', (error) => roundFailed(error));
  worker.on('failed', (_job, error) => roundFailed(error));
  await worker.waitUntilReady();
  const perSecond: number[] = [];
  try {
    for (let round = 0; round < config.rounds; round++) {
      completed = 0;
      roundTotal = config.calls;
      const done = new Promise<void>((resolve, reject) => {
        roundDone = resolve;
        roundFailed = reject;
      });
      const started = performance.now();
      for (let offset = 0; offset < config.calls; offset += 1_000) {
        const size = Math.min(1_000, config.calls - offset);
        await queue.addBulk(
          Array.from({ length: size }, (_, k) => ({
            name: 'add_one',
            data: { i: offset + k },
            opts: { removeOnComplete: true },
          })),
        );
      }
      await done;
      perSecond.push(config.calls / ((performance.now() - started) / 1_000));
    }
  } finally {
    await worker.close();
    await queue.obliterate({ force: true });
    await queue.close();
    await redis.stop();
  }
  return [{ measure: '3. the peer: durable jobs', subject: BULLMQ, unit: 'calls/s', values: perSecond }];
}
