import { beforeEach, describe, expect, it } from 'vitest';
import type { ClaimedCall, Store } from '../store.js';
import { makeCallRecord, makeInstance, statusEvent } from './records.js';

/** Runtime instances and their heartbeats; the claims of the calls of gone instances and of queued calls. `storeOf` is the test's fresh store. */
export function describeInstancesAndClaims(storeOf: () => Store): void {
  describe('instances and claims', () => {
    let store: Store;
    beforeEach(() => {
      store = storeOf();
    });

    it('keeps runtime instances and their heartbeats', async () => {
      await store.registerInstance(makeInstance({ id: 'i1' }));
      await store.registerInstance(makeInstance({ id: 'i2', pid: 99, protocol: 1 }));
      expect(await store.heartbeat('i1', 4_000)).toBe(true);
      expect(await store.heartbeat('unknown', 4_000)).toBe(false);
      expect((await store.listInstances()).sort((a, b) => a.id.localeCompare(b.id))).toEqual([
        makeInstance({ id: 'i1', heartbeatAt: 4_000 }),
        makeInstance({ id: 'i2', pid: 99, protocol: 1 }),
      ]);
      await store.removeInstance('i2');
      expect((await store.listInstances()).map((instance) => instance.id)).toEqual(['i1']);
    });

    it('claims the unfinished calls of gone instances once, and forgets those instances', async () => {
      await store.registerInstance(makeInstance({ id: 'dead' }));
      await store.registerInstance(makeInstance({ id: 'alive' }));
      await store.write({
        calls: [
          makeCallRecord({ callId: 'inline', ownerId: 'dead', status: 'inline' }),
          makeCallRecord({ callId: 'bg', ownerId: 'dead', status: 'backgrounded' }),
          makeCallRecord({ callId: 'done', ownerId: 'dead', status: 'succeeded', endedAt: 5 }),
          makeCallRecord({ callId: 'theirs', ownerId: 'alive', status: 'inline' }),
        ],
      });
      const claimed = await store.claimCalls(['dead'], 'me');
      expect(claimed.map((call) => [call.callId, call.ownerId]).sort()).toEqual([
        ['bg', 'me'],
        ['inline', 'me'],
      ]);
      expect((await store.getCall('bg'))?.ownerId).toBe('me');
      expect((await store.getCall('done'))?.ownerId).toBe('dead');
      expect(await store.claimCalls(['dead'], 'someone-else')).toEqual([]);
      expect((await store.listInstances()).map((instance) => instance.id)).toEqual(['alive']);
    });

    it('tells which unfinished calls an instance holds, each with its last seq: those of a claim whose answer was lost included', async () => {
      await store.write({
        calls: [
          makeCallRecord({ callId: 'q1' }),
          makeCallRecord({ callId: 'q2' }),
          makeCallRecord({ callId: 'running', ownerId: 'w1', status: 'inline' }),
          makeCallRecord({ callId: 'ended', ownerId: 'w1', status: 'succeeded', endedAt: 5 }),
          makeCallRecord({ callId: 'theirs', ownerId: 'w2', status: 'backgrounded' }),
        ],
      });
      await store.write({ events: [statusEvent('running', 1), statusEvent('running', 2)] });
      // A claim made, whose answer never came back.
      await store.claimQueued('w1', 1);
      const held = await store.heldBy?.('w1');
      expect(held?.map(({ record, lastSeq }) => [record.callId, record.ownerId, lastSeq]).sort()).toEqual([
        ['q1', 'w1', 0],
        ['running', 'w1', 2],
      ]);
      expect(await store.heldBy?.('nobody')).toEqual([]);
    });

    it('gives each queued call that no instance owns to one claimer, oldest first', async () => {
      await store.write({
        calls: [
          makeCallRecord({ callId: 'q1' }),
          makeCallRecord({ callId: 'owned', ownerId: 'someone' }),
          makeCallRecord({ callId: 'q2' }),
          makeCallRecord({ callId: 'approval', approval: 'pending' }),
          makeCallRecord({ callId: 'running', status: 'inline' }),
          makeCallRecord({ callId: 'q3' }),
          makeCallRecord({ callId: 'q4' }),
        ],
      });
      await store.write({ events: [statusEvent('q2', 1), statusEvent('q2', 2)] });
      const first = await store.claimQueued('w1', 2);
      expect(first.map(({ record, lastSeq }) => [record.callId, record.ownerId, lastSeq])).toEqual([
        ['q1', 'w1', 0],
        ['q2', 'w1', 2],
      ]);
      const ids = (claimed: ClaimedCall[] | undefined) => (claimed ?? []).map(({ record }) => record.callId);
      expect(ids(await store.claimQueued('w2', 1, 'q4'))).toEqual(['q4']);
      expect(await store.claimQueued('w3', 5, 'q1')).toEqual([]);
      expect(ids(await store.claimQueued('w3', 1, 'approval'))).toEqual(['approval']);
      const [a, b] = await Promise.all([store.claimQueued('w4', 10), store.claimQueued('w5', 10)]);
      expect([...ids(a), ...ids(b)]).toEqual(['q3']);
      expect((await store.getCall('q2'))?.ownerId).toBe('w1');
      expect((await store.getCall('owned'))?.ownerId).toBe('someone');
    });
  });
}
