import { Queue, QueueEvents, Worker } from 'bullmq';
import type { BenchConfig } from '../config.js';
import { type Row, throughput } from '../measure.js';
import { ensureRedisServer, type RedisPersistence, startRedis } from '../redis.js';

const WORKER = 'worker concurrency 64';
/** Jobs added in bulk, counted as the worker completes them: no caller ever gets a reply. */
export const BULLMQ_BULK = `BullMQ addBulk, completions counted, no reply (${WORKER})`;
/** What a caller of Baton gets: each call made on its own, and its result awaited. */
export const BULLMQ_REPLY: Record<RedisPersistence, string> = {
  off: `BullMQ with reply, Redis persistence off (${WORKER})`,
  'aof-everysec': `BullMQ with reply, Redis AOF everysec (${WORKER})`,
};

/** A local Redis and BullMQ's queue, worker and events on it, for one round. */
async function bullmqOn(persistence: RedisPersistence) {
  const redis = await startRedis(persistence);
  const connection = { host: '127.0.0.1', port: redis.port, maxRetriesPerRequest: null };
  const queue = new Queue('bench', { connection });
  const events = new QueueEvents('bench', { connection });
  const worker = new Worker('bench', async (job) => (job.data as { i: number }).i + 1, {
    connection,
    concurrency: 64,
  });
  await Promise.all([worker.waitUntilReady(), events.waitUntilReady()]);
  return {
    queue,
    events,
    worker,
    async close() {
      await worker.close();
      await events.close();
      await queue.close();
      await redis.stop();
    },
  };
}

/** Today's row: `addBulk` in thousands, the round ends when the worker has completed them all. */
async function bulkRound(config: BenchConfig): Promise<number> {
  const peer = await bullmqOn('off');
  try {
    let completed = 0;
    const done = new Promise<void>((resolve, reject) => {
      peer.worker.on('completed', () => {
        if (++completed === config.calls) resolve();
      });
      peer.worker.on('failed', (_job, error) => reject(error));
    });
    const started = performance.now();
    for (let offset = 0; offset < config.calls; offset += 1_000) {
      const size = Math.min(1_000, config.calls - offset);
      await peer.queue.addBulk(
        Array.from({ length: size }, (_, k) => ({
          name: 'add_one',
          data: { i: offset + k },
          opts: { removeOnComplete: true },
        })),
      );
    }
    await done;
    return config.calls / ((performance.now() - started) / 1_000);
  } finally {
    await peer.close();
  }
}

/**
 * The same work as Baton's inline call: `queue.add()` per call and the caller waits for the
 * result (`job.waitUntilFinished`, through QueueEvents, BullMQ's way for a caller to hear of the
 * end), with as many calls in flight as Baton's SQLite row.
 */
async function replyRound(config: BenchConfig, persistence: RedisPersistence): Promise<number> {
  const peer = await bullmqOn(persistence);
  // Each waiting caller listens for the close of the queue and of its events: one per call in flight.
  peer.events.setMaxListeners(config.inFlight + 10);
  peer.queue.setMaxListeners(config.inFlight + 10);
  try {
    return await throughput(config.calls, config.inFlight, async (i) => {
      const job = await peer.queue.add('add_one', { i });
      const result = await job.waitUntilFinished(peer.events);
      if (result !== i + 1) throw new Error(`BullMQ answered ${String(result)} for ${i}`);
    });
  } finally {
    await peer.close();
  }
}

/**
 * The peer a user would pick instead: no-op jobs through BullMQ on a local Redis. Each round has
 * a fresh Redis for each row, and the rows take turns round by round.
 */
export async function bullmq(config: BenchConfig): Promise<Row[] | string> {
  if (!ensureRedisServer()) return 'skipped: redis-server is not installed and cannot be installed here';
  const bulk: number[] = [];
  const reply: Record<RedisPersistence, number[]> = { off: [], 'aof-everysec': [] };
  for (let round = 0; round < config.rounds; round++) {
    bulk.push(await bulkRound(config));
    reply.off.push(await replyRound(config, 'off'));
    reply['aof-everysec'].push(await replyRound(config, 'aof-everysec'));
  }
  const measure = '3. the peer: durable jobs';
  return [
    { measure, subject: BULLMQ_BULK, unit: 'calls/s', values: bulk },
    { measure, subject: BULLMQ_REPLY.off, unit: 'calls/s', values: reply.off },
    { measure, subject: BULLMQ_REPLY['aof-everysec'], unit: 'calls/s', values: reply['aof-everysec'] },
  ];
}
