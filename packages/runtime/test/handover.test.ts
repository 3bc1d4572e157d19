import { makeCallRecord } from '@baton/store/testing';
import { describe, expect, it } from 'vitest';
import { gatedTool, settle, sharedStore, testRuntime } from './helpers.js';

/** What a caller hears of a call this process could not hand over as it stopped: ask again. */
const askAgain = {
  status: 'failed',
  error: {
    code: 'closed',
    message: expect.stringMatching(/send the same request again, with the same call id/),
  },
};

describe('a client that stops before the worker of a call its caller waits for has detached it', () => {
  it('tells its caller to ask again with the same id, never `backgrounded` of a call whose end would go untold', async () => {
    const { store } = sharedStore({ answers: true });
    const { tool } = gatedTool('work');
    const client = testRuntime([tool], { store, role: 'client', inlineBudgetMs: 60_000 });
    await client.runtime.ready;
    const reply = client.runtime.call({ name: 'work', args: {}, sessionId: 's', callId: 'c1' });
    await settle();
    // A worker claimed it and is cut off: the detach the client asks for is not carried out.
    expect(await store.claimQueued('far-worker', 1)).toHaveLength(1);
    const closed = client.runtime.close({ drainMs: 100 });
    for (let ms = 0; ms < 3_000; ms += 100) {
      client.clock.increment(100);
      await settle();
    }
    await closed;
    expect(await reply).toMatchObject({ callId: 'c1', ...askAgain });
    // Nothing was lost: the call is kept, its worker's to end, and not detached (its end is its reply).
    expect(await store.getCall('c1')).toMatchObject({
      status: 'queued',
      ownerId: 'far-worker',
      detached: false,
    });
  });
});

describe('a client that stops while it waits for a call another process runs under the same id', () => {
  it('tells the caller to ask again once the call is not detached by the time it stops', async () => {
    const { store } = sharedStore({ answers: true });
    const { tool } = gatedTool('work');
    const client = testRuntime([tool], { store, role: 'client', inlineBudgetMs: 60_000 });
    await client.runtime.ready;
    await store.write({
      calls: [
        makeCallRecord({
          callId: 'c1',
          toolName: 'work',
          mode: 'inline',
          status: 'inline',
          ownerId: 'far-worker',
          createdAt: client.clock.now(),
        }),
      ],
    });
    const reply = client.runtime.call({ name: 'work', args: {}, sessionId: 's1', callId: 'c1' });
    await settle();
    await client.runtime.close({ drainMs: 0 });
    expect(await reply).toMatchObject({ callId: 'c1', ...askAgain });
    expect(await store.getCall('c1')).toMatchObject({ status: 'inline', detached: false });
  });
});
