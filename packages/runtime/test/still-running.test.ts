import { defineTool, type Notification, type ToolContext } from '@baton/contracts';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { replacedUpdates } from '../src/ledger/replacing.js';
import { type Deferred, deferred } from '../src/testing.js';
import { settle, testRuntime } from './helpers.js';

function playedTool(mode: 'background' | 'auto' = 'background') {
  const runs: Array<{ ctx: ToolContext; done: Deferred<string> }> = [];
  const tool = defineTool({
    name: 'build',
    description: 'Builds the project',
    input: z.object({}),
    execution: { mode, inlineBudgetMs: 2_000 },
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

const queued = async (runtime: ReturnType<typeof testRuntime>['runtime']) =>
  (await runtime.notifications.list({ sessionId: 's', status: 'queued' })).map((notification) =>
    notification.outcome === 'running'
      ? (notification.runningForMs ?? `update ${notification.updateSeq}`)
      : notification.outcome,
  );

describe('notifyAfterMs: a caller hears that a call in the background still runs', () => {
  it('tells the session at each time asked for, a newer reminder replacing one not yet given', async () => {
    const { tool } = playedTool();
    const { runtime, clock, events } = testRuntime([tool]);
    const { callId } = await runtime.call({ name: 'build', sessionId: 's', notifyAfterMs: [60_000, 10_000] });
    expect((await runtime.get(callId))?.notifyAfterMs).toEqual([10_000, 60_000]);
    await advance(clock, 9_999);
    expect(await queued(runtime)).toEqual([]);
    await advance(clock, 1);
    const [reminder] = await runtime.notifications.list({ sessionId: 's' });
    expect(reminder).toMatchObject({
      callId,
      outcome: 'running',
      runningForMs: 10_000,
      title: 'Task still running: Background tool: build',
      output: { call_id: callId, status: 'running', running_for_ms: 10_000 },
    });
    expect(reminder?.body).toContain(`Still running after 10 s (call_id ${callId}); its result comes later.`);
    expect(events.filter((event) => event.type === 'still_running')).toMatchObject([
      { runningForMs: 10_000 },
    ]);
    await advance(clock, 50_000);
    expect(await queued(runtime)).toEqual([60_000]);
  });

  it('says nothing to a caller still waiting inline, and nothing after the end, which replaces the last', async () => {
    const { tool, runs } = playedTool('auto');
    const { runtime, clock } = testRuntime([tool]);
    const replying = runtime.call({
      name: 'build',
      sessionId: 's',
      callId: 'b1',
      notifyAfterMs: [1_000, 5_000, 9_000],
    });
    await settle();
    await advance(clock, 1_000);
    // Inline until its 2 s budget: its caller waits, and is told nothing.
    expect(await queued(runtime)).toEqual([]);
    await advance(clock, 1_000);
    expect(await replying).toMatchObject({ status: 'backgrounded' });
    await advance(clock, 3_000);
    expect(await queued(runtime)).toEqual([5_000]);
    runs[0]?.done.resolve('built');
    await settle();
    expect(await queued(runtime)).toEqual(['succeeded']);
    await advance(clock, 10_000);
    expect(await queued(runtime)).toEqual(['succeeded']);
  });

  it('lets an update replace a reminder not yet given', async () => {
    const { tool, runs } = playedTool();
    const { runtime, clock } = testRuntime([tool]);
    await runtime.call({ name: 'build', sessionId: 's', notifyAfterMs: 1_000 });
    await advance(clock, 1_000);
    expect(await queued(runtime)).toEqual([1_000]);
    runs[0]?.ctx.update('compiled 40 of 90 files');
    await settle();
    expect(await queued(runtime)).toEqual(['update 1']);
  });

  it('refuses a notifyAfterMs that is not a time or a short list of them, keeping nothing', async () => {
    const { tool } = playedTool();
    const { runtime } = testRuntime([tool]);
    for (const notifyAfterMs of [0, -5, [], Array.from({ length: 11 }, (_, i) => i + 1), ['60s']]) {
      const reply = await runtime.call({
        name: 'build',
        sessionId: 's',
        notifyAfterMs: notifyAfterMs as never,
      });
      expect(reply).toMatchObject({
        status: 'failed',
        error: {
          code: 'invalid_arguments',
          issues: [
            {
              path: 'notifyAfterMs',
              message: 'notifyAfterMs must be a number of milliseconds above 0, or a list of 1 to 10 of them',
            },
          ],
        },
      });
    }
    expect((await runtime.list()).calls).toEqual([]);
  });

  it('gives a loop that holds them only what no later one of the call replaces', () => {
    const of = (
      id: string,
      callId: string,
      outcome: Notification['outcome'],
      more: Partial<Notification> = {},
    ) => ({ id, callId, outcome, ...more }) as Notification;
    const held = [
      of('r1', 'a', 'running', { runningForMs: 1_000 }),
      of('u1', 'a', 'running', { updateSeq: 1 }),
      of('r2', 'a', 'running', { runningForMs: 2_000 }),
      of('u2', 'b', 'running', { updateSeq: 1 }),
      of('end', 'b', 'failed'),
      of('r3', 'c', 'running', { runningForMs: 1_000 }),
    ];
    // A reminder after an update does not replace it: the update says more.
    expect([...replacedUpdates(held)].sort()).toEqual(['r1', 'u2']);
  });
});
