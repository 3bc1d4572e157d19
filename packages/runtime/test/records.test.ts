import { defineTool } from '@baton/contracts';
import { memoryStore, type Store, type StoreWrite } from '@baton/store';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { gatedTool, settle, testRuntime } from './helpers.js';

const echo = defineTool({
  name: 'echo',
  description: 'e',
  input: z.object({ v: z.number() }),
  execute: ({ v }) => v,
});

describe('records, reads of your own writes, and the call id as an idempotency key', () => {
  it('get() and list() show the state of a reply as soon as call() resolves', async () => {
    const { runtime, clock } = testRuntime([echo]);
    clock.increment(1_000);
    const reply = await runtime.call({ name: 'echo', args: { v: 1 }, sessionId: 's1', messageId: 'm1' });
    expect(await runtime.get(reply.callId)).toEqual({
      callId: reply.callId,
      sessionId: 's1',
      messageId: 'm1',
      toolName: 'echo',
      args: { v: 1 },
      status: 'succeeded',
      mode: 'inline',
      detached: false,
      attempt: 1,
      ownerId: runtime.instanceId,
      createdAt: 1_000,
      startedAt: 1_000,
      endedAt: 1_000,
      durationMs: 0,
      outputTail: '',
      output: 1,
      result: 1,
    });
    expect((await runtime.list({ sessionId: 's1' })).calls.map((call) => call.callId)).toEqual([
      reply.callId,
    ]);
  });

  it('shows a running call live, and lists calls newest first with filters', async () => {
    const { tool, runs } = gatedTool('slow', { mode: 'background' });
    const { runtime } = testRuntime([echo, tool]);
    const first = await runtime.call({ name: 'echo', args: { v: 1 }, sessionId: 's1' });
    const second = await runtime.call({ name: 'slow', sessionId: 's1' });
    const third = await runtime.call({ name: 'echo', args: { v: 3 }, sessionId: 's2' });
    expect((await runtime.get(second.callId))?.status).toBe('backgrounded');
    expect((await runtime.list()).calls.map((call) => call.callId)).toEqual([
      third.callId,
      second.callId,
      first.callId,
    ]);
    expect((await runtime.list({ status: 'backgrounded' })).calls.map((call) => call.callId)).toEqual([
      second.callId,
    ]);
    expect(
      (await runtime.list({ toolName: 'echo', sessionId: 's1' })).calls.map((call) => call.callId),
    ).toEqual([first.callId]);
    runs[0]?.resolve('ok');
  });

  it('an event reaches subscribers only once what it describes can be read', async () => {
    const { tool, runs } = gatedTool('slow', { mode: 'background' });
    const { runtime } = testRuntime([tool]);
    const seenOnEvent: Array<Promise<unknown>> = [];
    runtime.events$.subscribe((event) => {
      if (event.type === 'started') seenOnEvent.push(runtime.list().then((page) => page.calls[0]?.status));
      if (event.type === 'notification') {
        seenOnEvent.push(runtime.notifications.list().then((list) => list.map((n) => n.id)));
      }
    });
    await runtime.call({ name: 'slow', sessionId: 's' });
    runs[0]?.resolve('ok');
    await settle();
    const [statusAtStart, notificationIds] = await Promise.all(seenOnEvent);
    expect(statusAtStart).toBe('backgrounded');
    expect(notificationIds).toHaveLength(1);
  });

  it('get() never goes back in time: a call that just ended reads as ended before its write lands', async () => {
    const { tool, runs } = gatedTool('slow', { mode: 'background' });
    const { runtime } = testRuntime([tool]);
    const reply = await runtime.call({ name: 'slow', sessionId: 's' });
    runs[0]?.resolve('done');
    await Promise.resolve();
    await Promise.resolve();
    expect((await runtime.get(reply.callId))?.status).toBe('succeeded');
  });

  it('the same callId twice is the same call: running, or long finished', async () => {
    const { tool, runs } = gatedTool('once');
    const { runtime } = testRuntime([tool]);
    const first = runtime.call({ name: 'once', sessionId: 's', callId: 'tool_call_1' });
    const again = runtime.call({ name: 'once', sessionId: 's', callId: 'tool_call_1' });
    await settle();
    expect(runs).toHaveLength(1);
    runs[0]?.resolve('only once');
    expect(await first).toEqual(await again);
    const later = await runtime.call({ name: 'once', sessionId: 's', callId: 'tool_call_1' });
    expect(later).toEqual({ callId: 'tool_call_1', status: 'succeeded', output: 'only once' });
    expect(runs).toHaveLength(1);
    expect((await runtime.list()).calls).toHaveLength(1);
  });

  it('the same callId twice in one tick runs once, even when the first call ends at once', async () => {
    let runs = 0;
    const instant = defineTool({
      name: 'instant',
      description: 'i',
      input: z.object({}),
      execute: () => ++runs,
    });
    const { runtime } = testRuntime([instant]);
    const [first, second] = await Promise.all([
      runtime.call({ name: 'instant', sessionId: 's', callId: 'same' }),
      runtime.call({ name: 'instant', sessionId: 's', callId: 'same' }),
    ]);
    expect(runs).toBe(1);
    expect(second).toEqual(first);
  });

  it('a refused call is recorded too, and its id is not run again', async () => {
    const { runtime } = testRuntime([echo]);
    const refused = await runtime.call({ name: 'echo', args: { v: 'x' }, sessionId: 's', callId: 'bad_1' });
    expect(refused.error?.code).toBe('invalid_arguments');
    const again = await runtime.call({ name: 'echo', args: { v: 1 }, sessionId: 's', callId: 'bad_1' });
    expect(again).toEqual(refused);
  });
});

describe('what the store costs', () => {
  it('storeWrites$ tells of each batch the store wrote: its rows, how long it took, and that it took it', async () => {
    const { runtime } = testRuntime([echo]);
    const timings: Array<{ rows: number; durationMs: number; ok: boolean }> = [];
    runtime.storeWrites$.subscribe((timing) => timings.push(timing));
    // Ten calls made in one tick go to the store together (group commit).
    await Promise.all(
      Array.from({ length: 10 }, (_, v) => runtime.call({ name: 'echo', args: { v }, sessionId: 's1' })),
    );
    await settle();
    expect(timings.length).toBeGreaterThan(0);
    expect(timings.length).toBeLessThan(10);
    expect(timings.every((timing) => timing.ok && timing.durationMs >= 0)).toBe(true);
    // Each call's record, and its queued, started and succeeded events.
    expect(timings.reduce((sum, timing) => sum + timing.rows, 0)).toBeGreaterThanOrEqual(40);
  });

  it('writes the record of each of a thousand calls made in one tick once, not once per batch it was cut into', async () => {
    const store = memoryStore();
    const recordWrites = new Map<string, number>();
    const counting: Store = Object.assign(Object.create(store), {
      write(batch: StoreWrite) {
        for (const record of batch.calls ?? []) {
          recordWrites.set(record.callId, (recordWrites.get(record.callId) ?? 0) + 1);
        }
        return store.write(batch);
      },
    });
    const { runtime } = testRuntime([echo], { store: counting });
    await runtime.ready;
    const replies = await Promise.all(
      Array.from({ length: 1_000 }, (_, v) => runtime.call({ name: 'echo', args: { v }, sessionId: 's1' })),
    );
    expect(replies.every((reply) => reply.status === 'succeeded')).toBe(true);
    expect(recordWrites.size).toBe(1_000);
    expect(Math.max(...recordWrites.values())).toBe(1);
  });
});
