import type { Store } from '@baton/store';
import { describe, expect, it } from 'vitest';
import { deferred } from '../src/testing.js';
import { gatedTool, settle, sharedStore, testRuntime } from './helpers.js';

/** A shared store whose reads of one call wait until `answer` is resolved. */
function slowLookups() {
  const { store } = sharedStore({ answers: true });
  const answer = deferred<void>();
  const slow: Store = Object.assign(Object.create(store) as Store, {
    async getCall(callId: string) {
      await answer.promise;
      return store.getCall(callId);
    },
  });
  return { store, slow, answer };
}

describe('a call still on its way in when the runtime closes', () => {
  for (const role of ['client', 'both'] as const) {
    it(`is refused closed, and nothing is stored under its id (role ${role}): the drain decided what to wait for without it`, async () => {
      const { store, slow, answer } = slowLookups();
      const { tool, runs } = gatedTool('work');
      const { runtime } = testRuntime([tool], { store: slow, role });
      await runtime.ready;
      // Its id is looked up in the store (it may be a retry) when the stop begins.
      const reply = runtime.call({ name: 'work', args: {}, sessionId: 's', callId: 'c1' });
      await settle();
      const closed = runtime.close();
      answer.resolve();
      expect(await reply).toMatchObject({ callId: 'c1', status: 'failed', error: { code: 'closed' } });
      await closed;
      expect(await store.getCall('c1')).toBeUndefined();
      expect(runs).toHaveLength(0);
    });
  }
});
