import { describe, expect, it } from 'vitest';
import { gatedTool, settle, sharedStore, testRuntime } from './helpers.js';

describe('the same call id twice at one client on a shared store', () => {
  it('sent at once, as new: one call runs, and both requests are answered with its end', async () => {
    const { store, tell } = sharedStore({ answers: true });
    const { tool, runs } = gatedTool('work');
    const client = testRuntime([tool], { store, role: 'client' });
    await client.runtime.ready;
    const request = { name: 'work', args: {}, sessionId: 's', callId: 'c1' };
    const first = client.runtime.call(request);
    const second = client.runtime.call(request);
    await settle();

    const worker = testRuntime([tool], { store, role: 'worker' });
    await worker.runtime.ready;
    tell({ type: 'queued' });
    await settle();
    expect(runs).toHaveLength(1);
    runs[0]?.resolve('done');
    await settle();
    tell({ type: 'events', callIds: ['c1'], sessionIds: ['s'], writer: worker.runtime.instanceId });
    const answered = { status: 'succeeded', output: 'done' };
    expect(await first).toMatchObject(answered);
    expect(await second).toMatchObject(answered);
    expect(runs).toHaveLength(1);
  });

  it('sent again while the first waits for its worker: both are answered once it is detached at the budget', async () => {
    const { store } = sharedStore({ answers: true });
    const { tool } = gatedTool('work', { mode: 'auto' });
    const client = testRuntime([tool], { store, role: 'client', inlineBudgetMs: 500 });
    await client.runtime.ready;
    const request = { name: 'work', args: {}, sessionId: 's', callId: 'c1' };
    const first = client.runtime.call(request);
    await settle();
    client.clock.increment(100);
    const second = client.runtime.call(request);
    await settle();
    client.clock.increment(500);
    await settle();
    expect(await first).toMatchObject({ callId: 'c1', status: 'backgrounded' });
    expect(await second).toMatchObject({ callId: 'c1', status: 'backgrounded' });
  });
});
