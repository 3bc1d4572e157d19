import { defineTool } from '@baton/contracts';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { BACKGROUND_CONTROL, createRuntime } from '../src/index.js';
import { gatedTool, reportingTool, settle, testRuntime } from './helpers.js';

/** A runtime with a background tool `research` and the four control tools. */
function controlled() {
  const research = gatedTool('research', { mode: 'background' });
  const test = testRuntime([research.tool], { builtins: [...BACKGROUND_CONTROL] });
  const { runtime } = test;
  /** What a model's call of a control tool gets back, from the session it is made in. */
  const use = async (name: string, args: object, sessionId = 'mine') => {
    const reply = await runtime.call({ name, args, sessionId });
    return reply.status === 'succeeded' ? reply.output : { refused: reply.error?.message };
  };
  const start = async (sessionId = 'mine') =>
    (await runtime.call({ name: 'research', args: { topic: 'tides' }, sessionId })).callId;
  return { ...test, runs: research.runs, use, start };
}

describe('background control: the tools a model follows what it started with', () => {
  it('registers check, wait, cancel and list only when asked, and refuses an unknown built-in', () => {
    expect(controlled().runtime.tools.names()).toEqual(['research', ...BACKGROUND_CONTROL]);
    expect(testRuntime([]).runtime.tools.names()).toEqual([]);
    expect(() => createRuntime({ builtins: ['wait_for_ever' as never] })).toThrow(
      '"wait_for_ever" is not a built-in tool; the built-ins are spawn_background, check_background',
    );
  });

  it('says what a call waits for by the event’s name, never by the key that carries its id and tenant', async () => {
    const listener = defineTool({
      name: 'listener',
      description: 'Waits for instructions',
      input: z.object({}),
      messages: z.string(),
      execution: { mode: 'background' },
      execute: async (_args, ctx) => ctx.nextMessage(),
    });
    const { runtime } = testRuntime([listener], { builtins: ['check_background'] });
    const { callId } = await runtime.call({ name: 'listener', sessionId: 'acme/s', callId: 'acme/c-1' });
    await settle();
    const checked = await runtime.call({
      name: 'check_background',
      args: { call_id: callId },
      sessionId: 'acme/s',
    });
    expect(checked.output).toMatchObject({ status: 'backgrounded', waiting_for: 'message:1' });
    expect(JSON.stringify(checked.output)).not.toMatch(/baton-event|acme%2F/);
  });

  it("checks a call's state, progress and output tail, then its result", async () => {
    const { tool, step } = reportingTool((ctx) => {
      ctx.progress({ current: 2, total: 5, unit: 'pages' });
      ctx.status('reading');
      ctx.log('stdout', 'read page 2');
    }, 'five pages read');
    const { runtime } = testRuntime([tool], { builtins: ['check_background'] });
    const { callId } = await runtime.call({ name: 'worker', sessionId: 'mine' });
    await settle();
    const check = async () =>
      (await runtime.call({ name: 'check_background', args: { call_id: callId }, sessionId: 'mine' })).output;
    expect(await check()).toMatchObject({
      call_id: callId,
      tool: 'worker',
      status: 'backgrounded',
      progress: { current: 2, total: 5, unit: 'pages' },
      status_text: 'reading',
      output_tail: expect.stringContaining('read page 2'),
    });
    step.resolve();
    await settle();
    expect(await check()).toMatchObject({ status: 'succeeded', result: 'five pages read' });
  });

  it('waits on the clock: still running at the timeout, the result when it ends, its notification then taken', async () => {
    const { runtime, clock, runs, use, start } = controlled();
    const callId = await start();
    await settle();

    const waiting = use('wait_background', { call_id: callId, timeout_ms: 5_000 });
    await settle();
    clock.increment(5_000);
    expect(await waiting).toMatchObject({
      call_id: callId,
      status: 'backgrounded',
      message:
        'Still running after 5000 ms. Continue the conversation; a later notification will report the result.',
    });

    const second = use('wait_background', { call_id: callId });
    await settle();
    runs[0]?.resolve({ high: '12:00' });
    expect(await second).toMatchObject({ status: 'succeeded', result: { high: '12:00' } });
    // The model has the result: the notification is not given again.
    expect(await runtime.notifications.list({ sessionId: 'mine', status: 'queued' })).toEqual([]);
    expect(await runtime.notifications.take({ sessionId: 'mine', idle: true })).toEqual([]);
  });

  it('answers a wait for a call that already ended at once', async () => {
    const { runs, use, start } = controlled();
    const callId = await start();
    await settle();
    runs[0]?.reject(new Error('the archive is down'));
    await settle();
    expect(await use('wait_background', { call_id: callId })).toMatchObject({
      status: 'failed',
      error: expect.any(String),
    });
  });

  it('cancels an open call once, and says so when it had already ended', async () => {
    const { runtime, runs, use, start } = controlled();
    const callId = await start();
    await settle();
    expect(await use('cancel_background', { call_id: callId })).toEqual({
      call_id: callId,
      status: 'cancelled',
    });
    await settle();
    expect(runs[0]?.signal.aborted).toBe(true);
    expect((await runtime.get(callId))?.status).toBe('cancelled');
    expect(await use('cancel_background', { call_id: callId })).toEqual({
      refused: `The call ${JSON.stringify(callId)} already ended: cancelled.`,
    });
  });

  it("lists the session's open background calls, and no other session's", async () => {
    const { runs, use, start } = controlled();
    const [first, second] = [await start(), await start()];
    await start('theirs');
    await settle();
    runs[0]?.resolve('done');
    await settle();
    const listed = (await use('list_background', {})) as { calls: Array<{ call_id: string }> };
    expect(listed.calls.map((call) => call.call_id)).toEqual([second]);
    expect(first).not.toBe(second);
  });

  it("is confined to the caller's session: another session's call is as unknown as none", async () => {
    const { runtime, use, start } = controlled();
    const theirs = await start('theirs');
    await settle();
    const unknown = { refused: `No background call ${JSON.stringify(theirs)} in this session.` };
    for (const name of ['check_background', 'wait_background', 'cancel_background'])
      expect(await use(name, { call_id: theirs })).toEqual(unknown);
    expect(await use('check_background', { call_id: 'nothing-here' })).toEqual({
      refused: 'No background call "nothing-here" in this session.',
    });
    expect((await runtime.get(theirs))?.status).toBe('backgrounded');
  });

  it("runtime.wait: bounded by the tool's inline budget by default, undefined for no call", async () => {
    const { runtime, clock, runs, start } = controlled();
    const callId = await start();
    await settle();
    const waiting = runtime.wait(callId);
    await settle();
    clock.increment(299);
    await settle();
    runs[0]?.resolve('found');
    expect(await waiting).toEqual({ callId, status: 'succeeded', output: 'found' });
    const later = await start();
    await settle();
    const bounded = runtime.wait(later);
    await settle();
    clock.increment(300);
    expect((await bounded)?.status).toBe('backgrounded');
    expect(await runtime.wait('nothing-here')).toBeUndefined();
  });
});
