import { defineTool } from '@baton/contracts';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { gatedTool, settle, testRuntime, typesOf } from './helpers.js';

const CONTINUING =
  'This tool is taking longer than 300 ms, so it is continuing in the background. Continue the conversation; a later notification will report the result.';

describe('the background continuation: the inline budget and promotion to the background', () => {
  it('replies inline to a fast auto call and creates no notification', async () => {
    const fast = defineTool({
      name: 'sleep_tool',
      description: 'sleep',
      input: z.object({}),
      execution: { mode: 'auto' },
      execute: async () => ({ done: true }),
    });
    const { runtime, events } = testRuntime([fast]);
    const reply = await runtime.call({ name: 'sleep_tool', args: {}, sessionId: 's1' });
    expect(reply).toEqual({ callId: reply.callId, status: 'succeeded', output: { done: true } });
    expect(typesOf(events, reply.callId)).toEqual(['queued', 'started', 'succeeded']);
    expect(await runtime.notifications.list({ sessionId: 's1' })).toEqual([]);
  });

  it('answers backgrounded at the budget with the seed message and the call id, while the same execution runs on', async () => {
    const { tool, runs } = gatedTool('sleep_tool', { mode: 'auto' });
    const { runtime, clock, events } = testRuntime([tool]);
    let replied = false;
    const pending = runtime
      .call({ name: 'sleep_tool', args: {}, sessionId: 's1', callId: 'call_1' })
      .then((reply) => {
        replied = true;
        return reply;
      });
    await settle();
    clock.increment(299);
    await settle();
    expect(replied).toBe(false);
    clock.increment(1);
    const reply = await pending;
    expect(reply).toEqual({
      callId: 'call_1',
      status: 'backgrounded',
      output: { status: 'running', tool: 'sleep_tool', call_id: 'call_1', message: CONTINUING },
    });
    expect((await runtime.get('call_1'))?.status).toBe('backgrounded');

    runs[0]?.resolve({ done: true, message: 'Sleep finished.' });
    await settle();
    expect(runs).toHaveLength(1);
    expect(typesOf(events, 'call_1')).toEqual([
      'queued',
      'started',
      'backgrounded',
      'succeeded',
      'notification',
    ]);
    expect(await runtime.get('call_1')).toMatchObject({
      status: 'succeeded',
      result: { done: true, message: 'Sleep finished.' },
    });

    const notifications = await runtime.notifications.list({ sessionId: 's1', status: 'queued' });
    expect(notifications).toHaveLength(1);
    expect(notifications[0]).toMatchObject({
      callId: 'call_1',
      title: 'Task completed: Background tool: sleep_tool',
      body: 'Tool call:\nsleep_tool({})\nReturn value:\n{\n  "done": true,\n  "message": "Sleep finished."\n}',
      outcome: 'succeeded',
      scheduling: 'when_idle',
      output: { status: 'completed', tool: 'sleep_tool', result: { done: true, message: 'Sleep finished.' } },
    });
  });

  it('notifies a failure of a backgrounded call with its error', async () => {
    const { tool, runs } = gatedTool('lookup', { mode: 'auto' });
    const { runtime, clock } = testRuntime([tool]);
    const pending = runtime.call({ name: 'lookup', args: { id: 7 }, sessionId: 's1' });
    clock.increment(300);
    const reply = await pending;
    expect(reply.status).toBe('backgrounded');
    const { ToolError } = await import('@baton/contracts');
    runs[0]?.reject(new ToolError('record 7 does not exist'));
    await settle();
    const [notification] = await runtime.notifications.list({ sessionId: 's1' });
    expect(notification).toMatchObject({
      outcome: 'failed',
      title: 'Task failed: Background tool: lookup',
      body: 'Tool call:\nlookup({\n  "id": 7\n})\nError:\nrecord 7 does not exist',
      output: { status: 'error', tool: 'lookup', error: 'record 7 does not exist' },
    });
    expect(await runtime.get(reply.callId)).toMatchObject({
      status: 'failed',
      error: { code: 'tool_error', message: 'record 7 does not exist' },
    });
  });

  it('never promotes an inline tool: the caller waits for the end, however long', async () => {
    const { tool, runs } = gatedTool('report');
    const { runtime, clock } = testRuntime([tool]);
    let replied = false;
    const pending = runtime.call({ name: 'report', sessionId: 's1' }).then((reply) => {
      replied = true;
      return reply;
    });
    clock.increment(60_000);
    await settle();
    expect(replied).toBe(false);
    runs[0]?.resolve('done');
    expect(await pending).toMatchObject({ status: 'succeeded', output: 'done' });
    expect(await runtime.notifications.list()).toEqual([]);
  });

  it("uses the runtime's defaultMode and budget, and a tool's own budget over them", async () => {
    const plain = gatedTool('plain');
    const own = gatedTool('own', { inlineBudgetMs: 50 });
    const { runtime, clock } = testRuntime([plain.tool, own.tool], {
      defaultMode: 'auto',
      inlineBudgetMs: 100,
    });
    const first = runtime.call({ name: 'own', sessionId: 's' });
    const second = runtime.call({ name: 'plain', sessionId: 's' });
    clock.increment(50);
    expect(await first).toMatchObject({
      status: 'backgrounded',
      output: { message: expect.stringContaining('50 ms') },
    });
    clock.increment(50);
    expect(await second).toMatchObject({
      status: 'backgrounded',
      output: { message: expect.stringContaining('100 ms') },
    });
  });
});
