import type { CallControl, StoreNotice } from '@baton/store';
import { makeCallRecord } from '@baton/store/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresStore } from '../src/index.js';
import { type ThrowawayPostgres, throwawayPostgres } from '../src/testing.js';

let server: ThrowawayPostgres;
beforeAll(async () => {
  server = await throwawayPostgres();
}, 60_000);
afterAll(() => server.stop());

const cancel = (callId: string, reason?: string): CallControl => ({
  type: 'control',
  callId,
  action: 'cancel',
  ...(reason === undefined ? {} : { reason }),
});

describe('the requests sent through a PostgreSQL store', () => {
  it('are told to the workers and kept, whole, for a process that did not hear them', async () => {
    const store = postgresStore({ connectionString: server.url, schema: `requests_kept_${process.pid}` });
    const heard: StoreNotice[] = [];
    await new Promise<void>((resolve) => {
      store.listen?.(
        (notice) => {
          if (notice.type === 'listening') resolve();
          else heard.push(notice);
        },
        { type: 'work' },
      );
    });
    // A reason longer than a notice holds: the notice carries a cut of it, the store all of it.
    const long = 'r'.repeat(10_000);
    await store.send?.(cancel('c1', long));
    await store.send?.({ type: 'control', callId: 'c2', action: 'approve' });
    await store.send?.(cancel('c1', 'again'));
    expect(await store.requestsFor?.(['c1', 'missing'])).toEqual([cancel('c1', long), cancel('c1', 'again')]);
    expect(await store.requestsFor?.(['c2'])).toEqual([{ type: 'control', callId: 'c2', action: 'approve' }]);
    for (let turn = 0; turn < 500 && heard.length < 3; turn++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(heard.map((notice) => notice.type === 'control' && notice.callId)).toEqual(['c1', 'c2', 'c1']);
    await store.close();
  });

  it('come with the calls a worker claims, and go with the calls that are removed', async () => {
    const store = postgresStore({ connectionString: server.url, schema: `requests_claimed_${process.pid}` });
    await store.write({
      calls: ['c1', 'c2'].map((callId) => makeCallRecord({ callId, attempt: 0 })),
    });
    await store.send?.(cancel('c1', 'not needed'));
    const claimed = await store.claimQueued('worker-1', 10);
    expect(claimed.map(({ record, requests }) => [record.callId, requests])).toEqual([
      ['c1', [cancel('c1', 'not needed')]],
      ['c2', undefined],
    ]);
    await store.write({
      calls: [makeCallRecord({ callId: 'c1', status: 'cancelled', endedAt: 1_005, ownerId: 'worker-1' })],
      writer: 'worker-1',
    });
    expect(await store.deleteEndedBefore(1_010)).toBe(1);
    expect(await store.requestsFor?.(['c1'])).toEqual([]);
    await store.close();
  });
});
