import type { CallReply } from '@baton/contracts';
import { describe, expect, it } from 'vitest';
import { gatedTool, settle, sharedStore, testRuntime } from './helpers.js';

/** Records each reply as it comes, so that a test can tell which have come. */
function replies() {
  const got = new Map<string, CallReply>();
  return {
    got,
    keep: (reply: Promise<CallReply>) => void reply.then((answer) => got.set(answer.callId, answer)),
  };
}

describe('a client with more calls than its workers end', () => {
  it('refuses a call past limits.waitingForWorkers with overloaded, keeping nothing, and takes calls again once some are answered', async () => {
    const { store } = sharedStore({ answers: true });
    const { tool } = gatedTool('work');
    const { tool: later } = gatedTool('later', { mode: 'background' });
    const client = testRuntime([tool, later], {
      store,
      role: 'client',
      limits: { waitingForWorkers: 2 },
      claimWaitMs: 5_000,
    });
    await client.runtime.ready;
    const { got, keep } = replies();
    for (const callId of ['c1', 'c2']) keep(client.runtime.call({ name: 'work', sessionId: 's', callId }));
    await settle();
    expect(client.runtime.stats().waitingForWorkers).toBe(2);
    const refused = await client.runtime.call({ name: 'work', sessionId: 's', callId: 'c3' });
    expect(refused).toMatchObject({
      callId: 'c3',
      status: 'failed',
      error: {
        code: 'overloaded',
        message:
          'Too many calls are waiting for a worker here (the limit is 2): nothing was kept. Try again in a few seconds.',
      },
    });
    expect(await store.getCall('c3')).toBeUndefined();
    // A call answered at once holds nothing here: it is taken past the limit.
    expect(await client.runtime.call({ name: 'later', sessionId: 's', callId: 'b1' })).toMatchObject({
      status: 'backgrounded',
    });
    client.clock.increment(5_000);
    await settle();
    expect([...got.values()].map((reply) => reply.status)).toEqual(['backgrounded', 'backgrounded']);
    expect(client.runtime.stats().waitingForWorkers).toBe(0);
    keep(client.runtime.call({ name: 'work', sessionId: 's', callId: 'c3' }));
    await settle();
    expect(await store.getCall('c3')).toMatchObject({ status: 'queued' });
  });

  it("keeps a tenant within its share: another tenant's calls are still taken", async () => {
    const { store } = sharedStore({ answers: true });
    const { tool } = gatedTool('work');
    const client = testRuntime([tool], {
      store,
      role: 'client',
      tenantOf: (sessionId) => sessionId.split('/')[0] as string,
      limits: { waitingForWorkers: 10, waitingForWorkersPerTenant: 1 },
    });
    await client.runtime.ready;
    void client.runtime.call({ name: 'work', sessionId: 'acme/s', callId: 'acme/c1' });
    await settle();
    expect(await client.runtime.call({ name: 'work', sessionId: 'acme/s', callId: 'acme/c2' })).toMatchObject(
      {
        status: 'failed',
        error: {
          code: 'overloaded',
          message: expect.stringContaining(
            'Too many calls of tenant acme are waiting for a worker here (the limit is 1)',
          ),
        },
      },
    );
    void client.runtime.call({ name: 'work', sessionId: 'globex/s', callId: 'globex/c1' });
    await settle();
    expect(await store.getCall('globex/c1')).toMatchObject({ status: 'queued' });
    expect(client.runtime.stats().waitingForWorkers).toBe(2);
  });

  it('sends an inline call no worker claims within claimWaitMs to the background, answered as at the budget; a worker that starts later runs it, its end a notification', async () => {
    const { store, tell } = sharedStore({ answers: true });
    const { tool, runs } = gatedTool('work');
    const client = testRuntime([tool], { store, role: 'client', claimWaitMs: 5_000 });
    await client.runtime.ready;
    const { got, keep } = replies();
    keep(client.runtime.call({ name: 'work', sessionId: 's', callId: 'c1' }));
    await settle();
    client.clock.increment(4_999);
    await settle();
    expect(got.size).toBe(0);
    client.clock.increment(1);
    await settle();
    expect(got.get('c1')).toMatchObject({
      status: 'backgrounded',
      output: { status: 'running', call_id: 'c1' },
    });
    expect(await store.getCall('c1')).toMatchObject({ status: 'queued', detached: true });
    // How far behind the workers are, as an operator reads it.
    expect(await client.runtime.queueDepth()).toEqual({ calls: 1, oldestCreatedAt: 0 });

    const worker = testRuntime([tool], { store, role: 'worker' });
    await worker.runtime.ready;
    tell({ type: 'queued' });
    await settle();
    runs[0]?.resolve('done');
    await settle();
    expect(await store.getCall('c1')).toMatchObject({ status: 'succeeded', detached: true });
    expect(await client.runtime.queueDepth()).toEqual({ calls: 0, oldestCreatedAt: undefined });
    expect((await store.listNotifications({ sessionId: 's' })).map((notice) => notice.callId)).toEqual([
      'c1',
    ]);
  });
});
