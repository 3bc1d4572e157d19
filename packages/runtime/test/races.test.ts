import { describe, expect, it } from 'vitest';
import { gatedTool, settle, testRuntime, typesOf } from './helpers.js';

describe('races', () => {
  it('cancel during promotion: the caller keeps its backgrounded reply and the session gets one cancelled notification', async () => {
    const { tool, runs } = gatedTool('crawl', { mode: 'auto' });
    const { runtime, clock, events } = testRuntime([tool]);
    const pending = runtime.call({ name: 'crawl', sessionId: 's', callId: 'c1' });
    await settle();
    clock.increment(300);
    // Same tick as the promotion, before its reply has even been written.
    const cancelled = runtime.cancel('c1');
    expect((await pending).status).toBe('backgrounded');
    expect(await cancelled).toBe(true);
    expect(runs[0]?.signal.aborted).toBe(true);
    expect(typesOf(events, 'c1')).toEqual(['queued', 'started', 'backgrounded', 'cancelled', 'notification']);
    expect((await runtime.notifications.list()).map((notification) => notification.outcome)).toEqual([
      'cancelled',
    ]);
  });

  it('a result and the budget in the same tick, budget first: backgrounded reply, then exactly one notification', async () => {
    const { tool, runs } = gatedTool('edge', { mode: 'auto' });
    const { runtime, clock } = testRuntime([tool]);
    const pending = runtime.call({ name: 'edge', sessionId: 's', callId: 'c1' });
    await settle();
    runs[0]?.resolve('result');
    clock.increment(300);
    expect((await pending).status).toBe('backgrounded');
    await settle();
    expect(await runtime.get('c1')).toMatchObject({ status: 'succeeded', result: 'result' });
    expect(await runtime.notifications.list()).toHaveLength(1);
  });

  it('a result and the budget in the same tick, result first: an inline reply, no notification, no timer left', async () => {
    const { tool, runs } = gatedTool('edge', { mode: 'auto' });
    const { runtime, clock } = testRuntime([tool]);
    const pending = runtime.call({ name: 'edge', sessionId: 's', callId: 'c1' });
    await settle();
    runs[0]?.resolve('result');
    await Promise.resolve();
    clock.increment(300);
    expect(await pending).toMatchObject({ status: 'succeeded', output: 'result' });
    await settle();
    expect(await runtime.notifications.list()).toEqual([]);
    expect(runtime.stats().timers).toBe(0);
  });

  it('a tool that ignores its AbortSignal is cancelled on time, and its late result is dropped', async () => {
    const { tool, runs } = gatedTool('deaf', { mode: 'auto' });
    const { runtime, clock, events } = testRuntime([tool]);
    const pending = runtime.call({ name: 'deaf', sessionId: 's', callId: 'c1' });
    clock.increment(300);
    await pending;
    await runtime.cancel('c1');
    expect((await runtime.get('c1'))?.status).toBe('cancelled');
    runs[0]?.resolve('late');
    await settle();
    expect((await runtime.get('c1'))?.status).toBe('cancelled');
    expect(typesOf(events, 'c1')).not.toContain('succeeded');
    expect(await runtime.notifications.list()).toHaveLength(1);
  });
});
