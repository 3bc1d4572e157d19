import { describe, expect, it } from 'vitest';
import { gatedTool, settle, testRuntime, typesOf } from './helpers.js';

describe('the result scheduling: background mode, the result formatter and scheduling', () => {
  it('acknowledges a background call at once with a running reply, and delivers the result later', async () => {
    const { tool, runs } = gatedTool('search_kb', { mode: 'background' });
    const { runtime, events } = testRuntime([tool]);
    const reply = await runtime.call({ name: 'search_kb', args: { query: 'test' }, sessionId: 's1' });
    expect(reply).toEqual({
      callId: reply.callId,
      status: 'backgrounded',
      output: { status: 'running', tool: 'search_kb', call_id: reply.callId },
    });
    expect(runs).toHaveLength(1);
    expect((await runtime.get(reply.callId))?.status).toBe('backgrounded');

    runs[0]?.resolve({ items: [1, 2, 3] });
    await settle();
    expect(typesOf(events, reply.callId)).toEqual([
      'queued',
      'backgrounded',
      'started',
      'succeeded',
      'notification',
    ]);
    const [notification] = await runtime.notifications.list({ sessionId: 's1', status: 'queued' });
    expect(notification?.output).toEqual({
      status: 'completed',
      tool: 'search_kb',
      result: { items: [1, 2, 3] },
    });
  });

  it("carries each tool's scheduling on its notification (when_idle by default)", async () => {
    const urgent = gatedTool('urgent', { mode: 'background', scheduling: 'interrupt' });
    const quiet = gatedTool('quiet', { mode: 'background', scheduling: 'silent' });
    const plain = gatedTool('plain', { mode: 'background' });
    const { runtime } = testRuntime([urgent.tool, quiet.tool, plain.tool]);
    for (const name of ['urgent', 'quiet', 'plain']) await runtime.call({ name, sessionId: 's1' });
    for (const { runs } of [urgent, quiet, plain]) runs[0]?.resolve('ok');
    await settle();
    const scheduling = Object.fromEntries(
      (await runtime.notifications.list()).map((notification) => [
        notification.toolName,
        notification.scheduling,
      ]),
    );
    expect(scheduling).toEqual({ urgent: 'interrupt', quiet: 'silent', plain: 'when_idle' });
  });

  it('gives each due notification once: interrupt and silent at any step, when_idle only when idle', async () => {
    const urgent = gatedTool('urgent', { mode: 'background', scheduling: 'interrupt' });
    const quiet = gatedTool('quiet', { mode: 'background', scheduling: 'silent' });
    const plain = gatedTool('plain', { mode: 'background' });
    const { runtime } = testRuntime([urgent.tool, quiet.tool, plain.tool]);
    for (const name of ['urgent', 'quiet', 'plain']) await runtime.call({ name, sessionId: 's1' });
    await runtime.call({ name: 'urgent', sessionId: 'other' });
    for (const { runs } of [urgent, quiet, plain]) for (const run of runs) run.resolve('ok');
    await settle();
    const names = (taken: { toolName: string }[]) => taken.map((notification) => notification.toolName);

    expect(names(await runtime.notifications.take({ sessionId: 's1', idle: false }))).toEqual([
      'urgent',
      'quiet',
    ]);
    expect(names(await runtime.notifications.take({ sessionId: 's1', idle: false }))).toEqual([]);
    expect(names(await runtime.notifications.take({ sessionId: 's1', idle: true }))).toEqual(['plain']);
    expect(await runtime.notifications.list({ sessionId: 's1', status: 'queued' })).toEqual([]);
    expect(names(await runtime.notifications.list({ sessionId: 'other', status: 'queued' }))).toEqual([
      'urgent',
    ]);
  });

  it('shapes replies with a formatter per runtime, and a per-tool formatter wins', async () => {
    const runtimeShaped = gatedTool('runtime_shaped', { mode: 'background' });
    const toolShaped = gatedTool('tool_shaped', { mode: 'background' });
    const withOwn = {
      ...toolShaped.tool,
      formatter: { running: () => 'tool says: started', result: () => 'tool says: finished' },
    };
    const { runtime } = testRuntime([runtimeShaped.tool, withOwn], {
      formatter: {
        running: (call) => `runtime says: ${call.toolName} started`,
        result: (call, outcome) =>
          outcome.ok ? `runtime says: ${call.toolName} gave ${outcome.value}` : 'error',
        cancelled: (call) => `runtime says: ${call.callId} cancelled`,
      },
    });
    expect((await runtime.call({ name: 'runtime_shaped', sessionId: 's' })).output).toBe(
      'runtime says: runtime_shaped started',
    );
    expect((await runtime.call({ name: 'tool_shaped', sessionId: 's' })).output).toBe('tool says: started');
    runtimeShaped.runs[0]?.resolve(42);
    toolShaped.runs[0]?.resolve(42);
    await settle();
    const outputs = (await runtime.notifications.list()).map((notification) => notification.output).sort();
    expect(outputs).toEqual(['runtime says: runtime_shaped gave 42', 'tool says: finished']);

    const cancelledCall = await runtime.call({ name: 'runtime_shaped', sessionId: 's' });
    await runtime.cancel(cancelledCall.callId);
    expect((await runtime.get(cancelledCall.callId))?.output).toBe(
      `runtime says: ${cancelledCall.callId} cancelled`,
    );
  });
});
