import { describe, expect, it } from 'vitest';
import type { Store } from '../store.js';
import { makeCallRecord } from './records.js';

/** `queueDepth`: the calls a worker could claim, and the oldest one's age. `storeOf` is the test's fresh store. */
export function describeQueueDepth(storeOf: () => Store): void {
  describe('queue depth', () => {
    it('counts the calls waiting for a worker and dates the oldest, but none held, waiting for approval or running', async () => {
      const store = storeOf();
      expect(await store.queueDepth()).toEqual({ calls: 0, oldestCreatedAt: undefined });
      await store.write({
        calls: [
          makeCallRecord({ callId: 'first', createdAt: 3_000 }),
          makeCallRecord({ callId: 'second', createdAt: 2_000 }),
          makeCallRecord({ callId: 'approval', approval: 'pending', createdAt: 1_000 }),
          makeCallRecord({ callId: 'held', ownerId: 'w1', createdAt: 500 }),
          makeCallRecord({ callId: 'running', status: 'inline', startedAt: 200, createdAt: 100 }),
        ],
      });
      expect(await store.queueDepth()).toEqual({ calls: 2, oldestCreatedAt: 2_000 });
      expect((await store.claimQueued('w2', 1)).map(({ record }) => record.callId)).toEqual(['first']);
      expect(await store.queueDepth()).toEqual({ calls: 1, oldestCreatedAt: 2_000 });
      await store.claimQueued('w2', 1);
      expect(await store.queueDepth()).toEqual({ calls: 0, oldestCreatedAt: undefined });
    });
  });
}
