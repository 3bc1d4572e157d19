import { BatonError, defineTool, type ExecutionOptions, type ToolContext } from '@baton/contracts';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type Deferred, deferred } from '../src/testing.js';
import { settle, testRuntime } from './helpers.js';

const QUIET_MS = 3_000;
const STALLED = `The tool call stalled: it gave no sign of progress for ${QUIET_MS} ms, so it was stopped`;

/** A tool whose runs the test plays: each run is given its context and a gate that ends it. */
function playedTool(execution: ExecutionOptions = {}) {
  const runs: Array<{ ctx: ToolContext; done: Deferred<string> }> = [];
  const tool = defineTool({
    name: 'crawl',
    description: 'Crawls a site',
    input: z.object({}),
    messages: z.string(),
    execution: { heartbeatTimeoutMs: QUIET_MS, ...execution },
    execute(_args, ctx) {
      const done = deferred<string>();
      runs.push({ ctx, done });
      return done.promise;
    },
  });
  return { tool, runs };
}

async function advance(clock: { increment(ms: number): void }, ms: number) {
  clock.increment(ms);
  await settle();
}

describe('stalls: a run that gives no sign of life for heartbeatTimeoutMs is stopped', () => {
  it('lets a run that reports within the quiet time go on, however long it takes', async () => {
    const { tool, runs } = playedTool({ mode: 'background' });
    const { runtime, clock } = testRuntime([tool]);
    const { callId } = await runtime.call({ name: 'crawl', sessionId: 's' });
    await settle();
    const [run] = runs;
    for (let second = 0; second < 10; second++) {
      await advance(clock, 2_000);
      if (second % 3 === 0) run?.ctx.progress({ current: second });
      else if (second % 3 === 1) run?.ctx.heartbeat();
      else run?.ctx.log('stdout', `page ${second}`);
    }
    expect((await runtime.get(callId))?.status).toBe('backgrounded');
    run?.done.resolve('crawled');
    await settle();
    expect(await runtime.get(callId)).toMatchObject({ status: 'succeeded', result: 'crawled' });
  });

  it('ends a silent run timed_out, saying it stalled, and aborts its signal', async () => {
    const { tool, runs } = playedTool();
    const { runtime, clock, events } = testRuntime([tool]);
    const replying = runtime.call({ name: 'crawl', sessionId: 's', callId: 'c1' });
    await settle();
    await advance(clock, 1_000);
    runs[0]?.ctx.heartbeat();
    await advance(clock, QUIET_MS - 1);
    expect(runs[0]?.ctx.signal.aborted).toBe(false);
    await advance(clock, 1);
    expect(await replying).toMatchObject({
      status: 'timed_out',
      error: { code: 'timed_out', message: STALLED },
    });
    const reason = runs[0]?.ctx.signal.reason;
    expect(reason instanceof BatonError && reason.code).toBe('timed_out');
    expect(events.find((event) => event.type === 'timed_out')).toMatchObject({
      timeoutMs: QUIET_MS,
      stalled: true,
    });
  });

  it('tries a stalled run again where its policy allows, and drops what the stalled one returns later', async () => {
    const { tool, runs } = playedTool({
      mode: 'background',
      retry: { maxAttempts: 2, initialIntervalMs: 1_000 },
    });
    const { runtime, clock, events } = testRuntime([tool]);
    const { callId } = await runtime.call({ name: 'crawl', sessionId: 's' });
    await settle();
    await advance(clock, QUIET_MS);
    expect(runs[0]?.ctx.signal.aborted).toBe(true);
    expect(events.find((event) => event.type === 'retrying')).toMatchObject({
      attempt: 2,
      error: { code: 'timed_out', message: STALLED },
    });
    await advance(clock, 1_000);
    expect(runs).toHaveLength(2);
    expect(runs[1]?.ctx.signal.aborted).toBe(false);
    // The stalled run comes back late: its result is not the call's.
    runs[0]?.done.resolve('late');
    await settle();
    expect((await runtime.get(callId))?.status).toBe('backgrounded');
    runs[1]?.done.resolve('second');
    await settle();
    expect(await runtime.get(callId)).toMatchObject({ status: 'succeeded', result: 'second', attempt: 2 });
  });

  it('drops the late result of every stalled run, not only the last: the third run’s result is the call’s', async () => {
    const { tool, runs } = playedTool({
      mode: 'background',
      retry: { maxAttempts: 3, initialIntervalMs: 1_000, backoffCoefficient: 1 },
    });
    const { runtime, clock } = testRuntime([tool]);
    const { callId } = await runtime.call({ name: 'crawl', sessionId: 's' });
    await settle();
    // Runs 1 and 2 stall, each retried after a second.
    await advance(clock, QUIET_MS);
    await advance(clock, 1_000);
    await advance(clock, QUIET_MS);
    await advance(clock, 1_000);
    expect(runs).toHaveLength(3);
    // Both come back late while the third runs: neither is the call's result.
    runs[0]?.done.resolve('first, late');
    runs[1]?.done.resolve('second, late');
    await settle();
    expect((await runtime.get(callId))?.status).toBe('backgrounded');
    runs[2]?.done.resolve('third');
    await settle();
    expect(await runtime.get(callId)).toMatchObject({ status: 'succeeded', result: 'third', attempt: 3 });
  });

  it('does not count a wait for a message as silence; the quiet time counts from its end', async () => {
    const { tool, runs } = playedTool({ mode: 'background' });
    const { runtime, clock } = testRuntime([tool]);
    const { callId } = await runtime.call({ name: 'crawl', sessionId: 's' });
    await settle();
    const waited = runs[0]?.ctx.nextMessage();
    await settle();
    await advance(clock, 4 * QUIET_MS);
    expect((await runtime.get(callId))?.status).toBe('backgrounded');
    await runtime.steer(callId, 'go on');
    expect(await waited).toBe('go on');
    await advance(clock, QUIET_MS - 1);
    expect((await runtime.get(callId))?.status).toBe('backgrounded');
    await advance(clock, 1);
    expect(await runtime.get(callId)).toMatchObject({ status: 'timed_out', error: { message: STALLED } });
  });

  it("tells a backgrounded call's session that it stalled, in its notification", async () => {
    const { tool } = playedTool({ mode: 'background' });
    const { runtime, clock } = testRuntime([tool]);
    const { callId } = await runtime.call({ name: 'crawl', sessionId: 's' });
    await settle();
    await advance(clock, QUIET_MS);
    const [notification] = await runtime.notifications.list({ sessionId: 's' });
    expect(notification).toMatchObject({ callId, status: 'queued' });
    expect(JSON.stringify(notification)).toContain('stalled');
  });

  it('refuses a heartbeatTimeoutMs that is not a positive number when the tool is defined', () => {
    expect(() =>
      defineTool({
        name: 'bad',
        description: 'bad',
        input: z.object({}),
        execution: { heartbeatTimeoutMs: 0 },
        execute: () => 'x',
      }),
    ).toThrow('tool "bad": execution.heartbeatTimeoutMs must be a positive number of milliseconds');
  });
});
