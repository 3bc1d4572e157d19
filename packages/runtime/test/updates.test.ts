import { defineTool, type Notification, type ToolContext } from '@baton/contracts';
import { memoryStore } from '@baton/store';
import { makeCallRecord } from '@baton/store/testing';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type Deferred, deferred } from '../src/testing.js';
import { settle, testRuntime } from './helpers.js';

/** A tool whose runs the test plays: each run is given its context and a gate that ends it. */
function playedTool(mode: 'background' | 'inline' = 'background') {
  const runs: Array<{ ctx: ToolContext; done: Deferred<string> }> = [];
  const tool = defineTool({
    name: 'research',
    description: 'Researches, telling what it finds as it goes',
    input: z.object({}),
    execution: { mode },
    execute(_args, ctx) {
      const done = deferred<string>();
      runs.push({ ctx, done });
      return done.promise;
    },
  });
  return { tool, runs };
}

const queuedOf = async (runtime: ReturnType<typeof testRuntime>['runtime']) =>
  (await runtime.notifications.list({ sessionId: 's', status: 'queued' })).map(
    (notification: Notification) => [notification.outcome, notification.updateSeq],
  );

describe('ctx.update: intermediate results for the model', () => {
  it('keeps the latest on the record, as an event, and tells a call in the background as a notification', async () => {
    const { tool, runs } = playedTool();
    const { runtime, events } = testRuntime([tool], { builtins: ['check_background'] });
    const { callId } = await runtime.call({ name: 'research', sessionId: 's' });
    await settle();
    runs[0]?.ctx.update({ found: 3 });
    await settle();
    expect((await runtime.get(callId))?.update).toMatchObject({ updateSeq: 1, value: { found: 3 } });
    expect(events.find((event) => event.type === 'update')).toMatchObject({
      updateSeq: 1,
      value: { found: 3 },
      scheduling: 'when_idle',
    });
    const [notification] = await runtime.notifications.list({ sessionId: 's' });
    expect(notification).toMatchObject({
      callId,
      outcome: 'running',
      updateSeq: 1,
      scheduling: 'when_idle',
      title: 'Task update 1: Background tool: research (still running)',
      output: { call_id: callId, status: 'running', update_seq: 1, update: { found: 3 } },
    });
    expect(notification?.body).toContain('still running; its result comes later');
    const checked = await runtime.call({
      name: 'check_background',
      args: { call_id: callId },
      sessionId: 's',
    });
    expect(checked.output).toMatchObject({ status: 'backgrounded', update: { found: 3 }, update_seq: 1 });
  });

  it('merges the updates that come faster than updateIntervalMs, and a newer one replaces one not yet given', async () => {
    const { tool, runs } = playedTool();
    const { runtime, clock, events } = testRuntime([tool], { updateIntervalMs: 1_000 });
    await runtime.call({ name: 'research', sessionId: 's' });
    await settle();
    const ctx = runs[0]?.ctx;
    ctx?.update('one');
    await settle();
    for (const value of ['two', 'three', 'four']) ctx?.update(value);
    await settle();
    expect(events.filter((event) => event.type === 'update')).toHaveLength(1);
    clock.increment(1_000);
    await settle();
    const written = events.flatMap((event) =>
      event.type === 'update' ? [[event.updateSeq, event.value]] : [],
    );
    expect(written).toEqual([
      [1, 'one'],
      [2, 'four'],
    ]);
    expect(await queuedOf(runtime)).toEqual([['running', 2]]);
  });

  it('lets the end replace an update not yet given, and one merged and not yet written', async () => {
    const { tool, runs } = playedTool();
    const { runtime, events } = testRuntime([tool]);
    const { callId } = await runtime.call({ name: 'research', sessionId: 's' });
    await settle();
    runs[0]?.ctx.update('half way');
    await settle();
    runs[0]?.ctx.update('nearly there');
    runs[0]?.done.resolve('all found');
    await settle();
    expect(await queuedOf(runtime)).toEqual([['succeeded', undefined]]);
    expect(events.filter((event) => event.type === 'update')).toHaveLength(1);
    expect((await runtime.get(callId))?.update?.value).toBe('half way');
  });

  it('lets the end replace an update told just before it, not yet in the store when the end came', async () => {
    const { tool, runs } = playedTool();
    const { runtime } = testRuntime([tool]);
    const { callId } = await runtime.call({ name: 'research', sessionId: 's' });
    await settle();
    // In one tick: the update's notification is still on its way to the store when the end replaces it.
    runs[0]?.ctx.update('half way');
    runs[0]?.done.resolve('all found');
    await settle();
    expect(await queuedOf(runtime)).toEqual([['succeeded', undefined]]);
    expect((await runtime.get(callId))?.update?.value).toBe('half way');
  });

  it('goes by the scheduling it names: an interrupt is due at the next step, not only when idle', async () => {
    const { tool, runs } = playedTool();
    const { runtime } = testRuntime([tool]);
    await runtime.call({ name: 'research', sessionId: 's' });
    await settle();
    runs[0]?.ctx.update('the build failed', { scheduling: 'interrupt' });
    await settle();
    const held = await runtime.notifications.hold({ sessionId: 's', idle: false });
    expect(held.map((notification) => [notification.outcome, notification.scheduling])).toEqual([
      ['running', 'interrupt'],
    ]);
  });

  it('keeps the most urgent scheduling of the updates it merges: an interrupt then an ordinary one still interrupts', async () => {
    const { tool, runs } = playedTool();
    const { runtime, clock } = testRuntime([tool]);
    await runtime.call({ name: 'research', sessionId: 's' });
    await settle();
    runs[0]?.ctx.update('progress 2');
    await settle();
    // Within the update interval: these two wait, merged, for the next write.
    runs[0]?.ctx.update('ERROR: build failed', { scheduling: 'interrupt' });
    clock.increment(100);
    runs[0]?.ctx.update('progress 3');
    clock.increment(10_000);
    await settle();
    const held = await runtime.notifications.hold({ sessionId: 's', idle: false });
    expect(held.map((notification) => [notification.updateSeq, notification.scheduling])).toEqual([
      [2, 'interrupt'],
    ]);
  });

  it('tells the session an update told while the call was inline, once the call goes to the background', async () => {
    const runs: Array<{ ctx: ToolContext; done: Deferred<string> }> = [];
    const tool = defineTool({
      name: 'research',
      description: 'Researches, telling what it finds as it goes',
      input: z.object({}),
      execution: { mode: 'auto' },
      execute(_args, ctx) {
        const done = deferred<string>();
        runs.push({ ctx, done });
        return done.promise;
      },
    });
    const { runtime, clock } = testRuntime([tool]);
    const replying = runtime.call({ name: 'research', sessionId: 's' });
    await settle();
    runs[0]?.ctx.update('a first find');
    await settle();
    expect(await queuedOf(runtime)).toEqual([]);
    clock.increment(300);
    expect(await replying).toMatchObject({ status: 'backgrounded' });
    await settle();
    expect(await queuedOf(runtime)).toEqual([['running', 1]]);
    // The end replaces it, as it replaces any update.
    runs[0]?.done.resolve('done');
    await settle();
    expect(await queuedOf(runtime)).toEqual([['succeeded', undefined]]);
  });

  it('tells a caller that waits inline nothing more: the update is on the record and the events only', async () => {
    const { tool, runs } = playedTool('inline');
    const { runtime } = testRuntime([tool]);
    const replying = runtime.call({ name: 'research', sessionId: 's', callId: 'c1' });
    await settle();
    runs[0]?.ctx.update('a first find');
    await settle();
    expect((await runtime.get('c1'))?.update?.value).toBe('a first find');
    runs[0]?.done.resolve('done');
    expect(await replying).toMatchObject({ status: 'succeeded' });
    expect(await runtime.notifications.list({ sessionId: 's' })).toEqual([]);
  });

  it('gives a loop that holds several updates of a call, and its end, only the end', async () => {
    const store = memoryStore();
    const { runtime } = testRuntime([], { store });
    const note = (id: string, outcome: Notification['outcome'], updateSeq?: number): Notification => ({
      id,
      callId: 'c1',
      sessionId: 's',
      toolName: 'research',
      status: 'queued',
      outcome,
      ...(updateSeq !== undefined ? { updateSeq } : {}),
      title: id,
      body: id,
      output: id,
      scheduling: 'when_idle',
      createdAt: 1,
    });
    // Written by another process, in one batch: none of them was replaced yet.
    await store.write({
      calls: [makeCallRecord({ callId: 'c1', sessionId: 's', status: 'succeeded' })],
      notifications: [note('u1', 'running', 1), note('u2', 'running', 2), note('end', 'succeeded')],
    });
    const held = await runtime.notifications.hold({ sessionId: 's', idle: true });
    expect(held.map((notification) => notification.id)).toEqual(['end']);
    expect(await queuedOf(runtime)).toEqual([['succeeded', undefined]]);
  });

  it("has the waiter who gets the end take the call's updates not yet given with it", async () => {
    const { tool, runs } = playedTool();
    const { runtime } = testRuntime([tool]);
    const { callId } = await runtime.call({ name: 'research', sessionId: 's' });
    await settle();
    runs[0]?.ctx.update('half way');
    await settle();
    const waiting = runtime.wait(callId, { timeoutMs: 10_000 });
    runs[0]?.done.resolve('done');
    expect(await waiting).toMatchObject({ status: 'succeeded' });
    expect(await queuedOf(runtime)).toEqual([]);
  });
});
