import { describe, expect, it } from 'vitest';
import { gatedTool, settle, sharedStore, testRuntime } from './helpers.js';

describe('the record keeps what the caller was answered at once', () => {
  it('keeps the acknowledgement of a call promoted at its budget, as its caller got it', async () => {
    const { tool, runs } = gatedTool('slow', { mode: 'auto' });
    const { runtime, clock } = testRuntime([tool]);
    const pending = runtime.call({ name: 'slow', sessionId: 's1', callId: 'c1' });
    await settle();
    clock.increment(300);
    const reply = await pending;
    expect(reply.status).toBe('backgrounded');
    expect((await runtime.get('c1'))?.acknowledgement).toEqual(reply.output);
    runs[0]?.resolve('done');
    await settle();
    // The end keeps it beside the output the notification brought.
    expect(await runtime.get('c1')).toMatchObject({
      status: 'succeeded',
      acknowledgement: reply.output,
      output: 'done',
    });
  });

  it('keeps the acknowledgement of a background call and of one that waits for approval', async () => {
    const background = gatedTool('report', { mode: 'background' });
    const approval = gatedTool('deploy', { needsApproval: true });
    const { runtime } = testRuntime([background.tool, approval.tool]);
    const reported = await runtime.call({ name: 'report', sessionId: 's1', callId: 'b1' });
    const deploying = await runtime.call({ name: 'deploy', sessionId: 's1', callId: 'd1' });
    expect((await runtime.get('b1'))?.acknowledgement).toEqual(reported.output);
    expect((await runtime.get('d1'))?.acknowledgement).toEqual(deploying.output);
    expect(deploying.output).toMatchObject({ status: 'awaiting_approval' });
  });

  it('keeps none for a call answered inline', async () => {
    const { tool, runs } = gatedTool('quick', { mode: 'auto' });
    const { runtime } = testRuntime([tool]);
    const pending = runtime.call({ name: 'quick', sessionId: 's1', callId: 'q1' });
    await settle();
    runs[0]?.resolve('fast');
    expect(await pending).toMatchObject({ status: 'succeeded', output: 'fast' });
    expect((await runtime.get('q1'))?.acknowledgement).toBeUndefined();
  });

  it('keeps the acknowledgement a client gave when it detached a call no worker had claimed', async () => {
    const { store } = sharedStore({ answers: true });
    const { tool } = gatedTool('slow', { mode: 'auto' });
    const { runtime: client, clock } = testRuntime([tool], { store, role: 'client' });
    await client.ready;
    const pending = client.call({ name: 'slow', sessionId: 's1', callId: 'u1' });
    await settle();
    clock.increment(300);
    const reply = await pending;
    expect(reply.status).toBe('backgrounded');
    expect((await store.getCalls(['u1']))[0]).toMatchObject({
      status: 'queued',
      detached: true,
      acknowledgement: reply.output,
    });
  });
});
