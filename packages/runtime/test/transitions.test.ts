import type { CallEvent } from '@baton/contracts';
import { ToolError } from '@baton/contracts';
import { describe, expect, it } from 'vitest';
import { gatedTool, settle, testRuntime } from './helpers.js';

/** What each state event of a call says it did: `type from->to`. */
function transitionsOf(events: CallEvent[], callId: string): string[] {
  return events
    .filter((event) => event.callId === callId && 'to' in event)
    .map(
      (event) =>
        `${event.type} ${'from' in event && event.from ? event.from : ''}->${'to' in event ? event.to : ''}`,
    );
}

describe('the events of a call say which transition of the machine they report', () => {
  it('an auto call promoted at its budget: queued, started inline, backgrounded, succeeded in the background', async () => {
    const { tool, runs } = gatedTool('slow', { mode: 'auto' });
    const { runtime, clock, events } = testRuntime([tool], { inlineBudgetMs: 100 });
    const reply = runtime.call({ name: 'slow', sessionId: 's', callId: 'c1' });
    await settle();
    clock.increment(100);
    expect(await reply).toMatchObject({ status: 'backgrounded' });
    runs[0]?.resolve('done');
    await settle();
    expect(transitionsOf(events, 'c1')).toEqual([
      'queued ->queued',
      'started queued->inline',
      'backgrounded inline->backgrounded',
      'succeeded backgrounded->succeeded',
    ]);
  });

  it('a retry waits where the call is, and the next attempt starts from there', async () => {
    const { tool, runs } = gatedTool('flaky', { retry: { maxAttempts: 2, initialIntervalMs: 50 } });
    const { runtime, clock, events } = testRuntime([tool]);
    const reply = runtime.call({ name: 'flaky', sessionId: 's', callId: 'c1' });
    await settle();
    runs[0]?.reject(new ToolError('try again', { retryable: true }));
    await settle();
    expect(runtime.stats().timers).toBe(1);
    clock.increment(50);
    await settle();
    runs[1]?.resolve('ok');
    expect(await reply).toMatchObject({ status: 'succeeded', output: 'ok' });
    expect(transitionsOf(events, 'c1')).toEqual([
      'queued ->queued',
      'started queued->inline',
      'retrying inline->inline',
      'started inline->inline',
      'succeeded inline->succeeded',
    ]);
  });

  it('a call that needs approval is answered from the queue, and a rejection fails it from there', async () => {
    const { tool, runs } = gatedTool('deploy', { needsApproval: true });
    const { runtime, events } = testRuntime([tool]);
    expect(await runtime.call({ name: 'deploy', sessionId: 's', callId: 'd1' })).toMatchObject({
      status: 'backgrounded',
      output: { status: 'awaiting_approval' },
    });
    expect(await runtime.inputs.reject('d1', 'not today')).toBe(true);
    await settle();
    expect(runs).toHaveLength(0);
    expect(transitionsOf(events, 'd1')).toEqual([
      'queued ->queued',
      'backgrounded queued->queued',
      'failed queued->failed',
    ]);
    expect((await runtime.get('d1'))?.error).toMatchObject({ code: 'approval_rejected' });
    expect(runtime.stats()).toMatchObject({ active: 0, timers: 0 });
  });
});
