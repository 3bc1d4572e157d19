import type { BatonError } from '@baton/contracts';
import { describe, expect, it } from 'vitest';
import { gatedTool, settle, testRuntime, typesOf } from './helpers.js';

describe('cancellation', () => {
  it('cancels an inline call: its signal aborts and its caller gets a cancelled reply', async () => {
    const { tool, runs } = gatedTool('work');
    const { runtime, events } = testRuntime([tool]);
    const pending = runtime.call({ name: 'work', sessionId: 's1', callId: 'c1' });
    await settle();
    expect(await runtime.cancel('c1')).toBe(true);
    expect(runs[0]?.signal.aborted).toBe(true);
    expect((runs[0]?.signal.reason as BatonError | undefined)?.code).toBe('cancelled');
    expect(await pending).toEqual({
      callId: 'c1',
      status: 'cancelled',
      output: { status: 'cancelled', call_id: 'c1' },
      error: { code: 'cancelled', message: 'The tool call was cancelled' },
    });
    expect(typesOf(events, 'c1')).toEqual(['queued', 'started', 'cancelled']);
    expect(await runtime.notifications.list()).toEqual([]);
  });

  it('cancels a backgrounded call, which queues a cancelled notification', async () => {
    const { tool, runs } = gatedTool('crawl', { mode: 'auto' });
    const { runtime, clock } = testRuntime([tool]);
    const pending = runtime.call({ name: 'crawl', args: { site: 'x' }, sessionId: 's1', callId: 'c1' });
    clock.increment(300);
    expect((await pending).status).toBe('backgrounded');
    expect(await runtime.cancel('c1')).toBe(true);
    expect(runs[0]?.signal.aborted).toBe(true);
    const notifications = await runtime.notifications.list({ sessionId: 's1' });
    expect(notifications).toHaveLength(1);
    expect(notifications[0]).toMatchObject({
      outcome: 'cancelled',
      title: 'Task cancelled: Background tool: crawl',
      body: 'Tool call:\ncrawl({\n  "site": "x"\n})\nError:\ntool execution was cancelled before completion',
    });
  });

  it("cancels the call when the caller's signal aborts before the reply, and not after it", async () => {
    const { tool, runs } = gatedTool('crawl', { mode: 'auto' });
    const { runtime, clock } = testRuntime([tool]);

    const stop = new AbortController();
    const stopped = runtime.call({ name: 'crawl', sessionId: 's1', callId: 'c1' }, { signal: stop.signal });
    await settle();
    stop.abort();
    expect(await stopped).toMatchObject({ status: 'cancelled' });
    expect(runs[0]?.signal.aborted).toBe(true);
    expect((await runtime.get('c1'))?.error?.message).toContain("the caller's signal aborted");

    const already = AbortSignal.abort();
    expect(
      await runtime.call({ name: 'crawl', sessionId: 's1', callId: 'c2' }, { signal: already }),
    ).toMatchObject({
      status: 'cancelled',
    });

    const late = new AbortController();
    const answered = runtime.call({ name: 'crawl', sessionId: 's1', callId: 'c3' }, { signal: late.signal });
    await settle();
    clock.increment(300);
    expect((await answered).status).toBe('backgrounded');
    late.abort();
    await settle();
    expect((await runtime.get('c3'))?.status).toBe('backgrounded');
    runs.at(-1)?.resolve('done');
    await settle();
    expect((await runtime.get('c3'))?.status).toBe('succeeded');
  });

  it('hands a call its caller gave up on to the background when onAbort says so, and cancels one that must stay inline', async () => {
    const { tool, runs } = gatedTool('crawl', { mode: 'auto' });
    const inline = gatedTool('lookup', { mode: 'inline' });
    const { runtime } = testRuntime([tool, inline.tool]);
    // The caller's own timeout: the call goes on, and its end is the session's notification.
    const gaveUp = (reason: unknown) => (String(reason).includes('timed out') ? 'background' : 'cancel');
    const timedOut = new AbortController();
    const waiting = runtime.call(
      { name: 'crawl', sessionId: 's1', callId: 'c1' },
      { signal: timedOut.signal, onAbort: gaveUp },
    );
    await settle();
    timedOut.abort('Request timed out');
    expect(await waiting).toMatchObject({ status: 'backgrounded' });
    expect(runs[0]?.signal.aborted).toBe(false);
    runs[0]?.resolve('crawled');
    await settle();
    expect(await runtime.get('c1')).toMatchObject({ status: 'succeeded', detached: true });
    expect((await runtime.notifications.list({ sessionId: 's1' })).map((n) => n.outcome)).toEqual([
      'succeeded',
    ]);

    // Asked to stop: cancelled, as before.
    const stopped = new AbortController();
    const asked = runtime.call(
      { name: 'crawl', sessionId: 's1', callId: 'c2' },
      { signal: stopped.signal, onAbort: gaveUp },
    );
    await settle();
    stopped.abort('the user pressed Esc');
    expect(await asked).toMatchObject({ status: 'cancelled' });

    // A call that may not go to the background is cancelled whatever onAbort says.
    const left = new AbortController();
    const lookup = runtime.call(
      { name: 'lookup', sessionId: 's1', callId: 'c3' },
      { signal: left.signal, onAbort: 'background' },
    );
    await settle();
    left.abort();
    expect(await lookup).toMatchObject({ status: 'cancelled' });
    expect(inline.runs[0]?.signal.aborted).toBe(true);
  });

  it('returns false and changes nothing for an unknown or finished call', async () => {
    const { tool, runs } = gatedTool('work');
    const { runtime, events } = testRuntime([tool]);
    const pending = runtime.call({ name: 'work', sessionId: 's1', callId: 'c1' });
    await settle();
    runs[0]?.resolve('ok');
    await pending;
    const before = events.length;
    expect(await runtime.cancel('c1')).toBe(false);
    expect(await runtime.cancel('nobody')).toBe(false);
    expect((await runtime.get('c1'))?.status).toBe('succeeded');
    expect(events.length).toBe(before);
  });

  it('cancelSession cancels the live calls of one session only', async () => {
    const { tool, runs } = gatedTool('work', { mode: 'background' });
    const { runtime } = testRuntime([tool]);
    for (const [sessionId, callId] of [
      ['a', 'a1'],
      ['a', 'a2'],
      ['b', 'b1'],
    ] as const) {
      await runtime.call({ name: 'work', sessionId, callId });
    }
    expect(await runtime.cancelSession('a')).toBe(2);
    expect((await runtime.get('a1'))?.status).toBe('cancelled');
    expect((await runtime.get('a2'))?.status).toBe('cancelled');
    expect((await runtime.get('b1'))?.status).toBe('backgrounded');
    expect(runs.map((run) => run.signal.aborted)).toEqual([true, true, false]);
  });

  it('close() ends what still runs in memory `interrupted` (nobody cancelled it) and answers later calls `closed`, as a reply', async () => {
    const { tool, runs } = gatedTool('work');
    const { runtime } = testRuntime([tool]);
    const pending = runtime.call({ name: 'work', sessionId: 's', callId: 'c1' });
    await settle();
    await runtime.close();
    expect(await pending).toMatchObject({ status: 'failed', error: { code: 'interrupted' } });
    expect(runs[0]?.signal.aborted).toBe(true);
    expect(runtime.stats()).toMatchObject({ active: 0, running: 0, timers: 0 });
    // `call()` never rejects: a closed runtime is a failure like any other, with its own code.
    expect(await runtime.call({ name: 'work', sessionId: 's', callId: 'late' })).toMatchObject({
      callId: 'late',
      status: 'failed',
      error: { code: 'closed', message: 'the runtime is closed' },
    });
    expect(await runtime.callBatch([{ name: 'work' }], { sessionId: 's' })).toMatchObject([
      { status: 'failed', error: { code: 'closed' } },
    ]);
    expect(runs).toHaveLength(1);
  });
});

describe('timeouts', () => {
  it('ends a call timed_out at its timeout and aborts it, even if the tool ignores its signal; the late result is dropped', async () => {
    const { tool, runs } = gatedTool('stubborn', { timeoutMs: 1_000 });
    const { runtime, clock, events } = testRuntime([tool]);
    const pending = runtime.call({ name: 'stubborn', sessionId: 's', callId: 'c1' });
    await settle();
    clock.increment(1_000);
    expect(await pending).toEqual({
      callId: 'c1',
      status: 'timed_out',
      output: { error: 'The tool call timed out after 1000 ms' },
      error: { code: 'timed_out', message: 'The tool call timed out after 1000 ms' },
    });
    expect((runs[0]?.signal.reason as BatonError | undefined)?.code).toBe('timed_out');
    runs[0]?.resolve('too late');
    await settle();
    expect(await runtime.get('c1')).toMatchObject({ status: 'timed_out' });
    expect((await runtime.get('c1'))?.result).toBeUndefined();
    expect(typesOf(events, 'c1')).toEqual(['queued', 'started', 'timed_out']);
  });

  it('times out a backgrounded call and notifies it as failed', async () => {
    const { tool } = gatedTool('slow', { mode: 'auto', timeoutMs: 5_000 });
    const { runtime, clock } = testRuntime([tool]);
    const pending = runtime.call({ name: 'slow', sessionId: 's', callId: 'c1' });
    await settle();
    clock.increment(300);
    expect((await pending).status).toBe('backgrounded');
    clock.increment(4_700);
    await settle();
    expect((await runtime.get('c1'))?.status).toBe('timed_out');
    const [notification] = await runtime.notifications.list();
    expect(notification).toMatchObject({
      outcome: 'timed_out',
      title: 'Task failed: Background tool: slow',
      body: 'Tool call:\nslow({})\nError:\nThe tool call timed out after 5000 ms',
    });
  });

  it("uses the runtime's timeout for tools that set none", async () => {
    const { tool } = gatedTool('plain');
    const { runtime, clock } = testRuntime([tool], { timeoutMs: 2_000 });
    const pending = runtime.call({ name: 'plain', sessionId: 's' });
    await settle();
    clock.increment(2_000);
    expect((await pending).status).toBe('timed_out');
  });
});
