import { BatonError, defineTool, isBatonError } from '@baton/contracts';
import type { CallControl, Store } from '@baton/store';
import { memoryStore } from '@baton/store';
import { makeCallRecord } from '@baton/store/testing';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { deferred } from '../src/testing.js';
import { gatedTool, settle, sharedStore, testRuntime, typesOf } from './helpers.js';

/** A tool that takes text messages and returns what it read, after it was told to finish. */
function steeredTool(execution = {}) {
  const readBy: string[][] = [];
  const tool = defineTool({
    name: 'research',
    description: 'Researches until it is told to finish',
    input: z.object({ topic: z.string() }),
    messages: z.string().min(1),
    execution: { mode: 'background' as const, ...execution },
    async execute({ topic }, ctx) {
      const read: string[] = [];
      readBy.push(read);
      for (;;) {
        const message = await ctx.nextMessage();
        read.push(message);
        if (message === 'finish') return { topic, read };
        if (message === 'fail') throw new Error('the source went away');
      }
    },
  });
  return { tool, readBy };
}

async function refusalOf(sending: Promise<unknown>): Promise<{ code: string; message: string }> {
  const error = await sending.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  if (!isBatonError(error)) throw new Error(`expected a BatonError, got ${String(error)}`);
  return { code: error.code, message: error.message };
}

describe('steering: messages to a running call', () => {
  it('gives the tool each message once, in the order sent, and answers the sender once it is stored', async () => {
    const { tool } = steeredTool();
    const { runtime, events } = testRuntime([tool]);
    const { callId } = await runtime.call({ name: 'research', args: { topic: 'tides' }, sessionId: 's' });
    expect(await runtime.steer(callId, 'look at the moon')).toEqual({ callId, messageSeq: 1 });
    expect(await runtime.steer(callId, 'and the sun')).toEqual({ callId, messageSeq: 2 });
    await runtime.steer(callId, 'finish');
    expect(await runtime.wait(callId, { timeoutMs: 1_000 })).toMatchObject({
      status: 'succeeded',
      output: { topic: 'tides', read: ['look at the moon', 'and the sun', 'finish'] },
    });
    const read = events.filter((event) => event.callId === callId && event.type === 'message');
    expect(read.map((event) => event.type === 'message' && [event.messageSeq, event.message])).toEqual([
      [1, 'look at the moon'],
      [2, 'and the sun'],
      [3, 'finish'],
    ]);
    expect((await runtime.get(callId))?.messagesRead).toBe(3);
  });

  it('numbers the messages of senders at once apart, and loses none of them', async () => {
    const { tool } = steeredTool();
    const { runtime } = testRuntime([tool]);
    const { callId } = await runtime.call({ name: 'research', args: { topic: 'tides' }, sessionId: 's' });
    const receipts = await Promise.all(['one', 'two', 'three'].map((text) => runtime.steer(callId, text)));
    expect(receipts.map((receipt) => receipt.messageSeq).sort()).toEqual([1, 2, 3]);
    await runtime.steer(callId, 'finish');
    const reply = await runtime.wait(callId, { timeoutMs: 1_000 });
    const read = (reply?.output as { read: string[] } | undefined)?.read ?? [];
    expect(read.slice(0, 3).sort()).toEqual(['one', 'three', 'two']);
    expect(read[3]).toBe('finish');
  });

  it('stores a message in the same reads however many wait unread before it', async () => {
    const { tool } = steeredTool();
    const store = memoryStore();
    let reads = 0;
    const counted: Store = Object.assign(Object.create(store) as Store, {
      getResolution: (key: string) => {
        reads++;
        return store.getResolution(key);
      },
    });
    // The tool reads nothing: every message waits unread.
    const holding = defineTool({ ...tool, name: 'holding', execute: () => new Promise<never>(() => {}) });
    const { runtime } = testRuntime([holding], { store: counted });
    const { callId } = await runtime.call({ name: 'holding', args: { topic: 'tides' }, sessionId: 's' });
    const readsOf = async (count: number) => {
      const before = reads;
      for (let i = 0; i < count; i++) await runtime.steer(callId, `note ${i}`);
      return (reads - before) / count;
    };
    const first = await readsOf(10);
    await readsOf(200);
    expect(await readsOf(10)).toBe(first);
    expect(first).toBeLessThanOrEqual(2);
  });

  it('keeps the messages sent before the tool looks, and takeMessages gives them all without waiting', async () => {
    const looked = deferred<void>();
    const batches: string[][] = [];
    const tool = defineTool({
      name: 'agent',
      description: 'Takes the messages between its turns',
      input: z.object({}),
      messages: z.string(),
      execution: { mode: 'background' },
      async execute(_args, ctx) {
        batches.push(await ctx.takeMessages());
        await looked.promise;
        batches.push(await ctx.takeMessages());
        batches.push(await ctx.takeMessages());
        return 'done';
      },
    });
    const { runtime } = testRuntime([tool]);
    const { callId } = await runtime.call({ name: 'agent', sessionId: 's' });
    await settle();
    await runtime.steer(callId, 'first');
    await runtime.steer(callId, 'second');
    looked.resolve();
    expect(await runtime.wait(callId, { timeoutMs: 1_000 })).toMatchObject({ status: 'succeeded' });
    expect(batches).toEqual([[], ['first', 'second'], []]);
  });

  it('gives a retry the messages the failed attempt had not read, and not those it had', async () => {
    const { tool, readBy } = steeredTool({ retry: { maxAttempts: 2, initialIntervalMs: 1_000 } });
    const { runtime, clock } = testRuntime([tool]);
    const { callId } = await runtime.call({ name: 'research', args: { topic: 'tides' }, sessionId: 's' });
    await runtime.steer(callId, 'moon');
    await runtime.steer(callId, 'fail');
    await settle();
    // Sent while the call waits for its retry.
    await runtime.steer(callId, 'sun');
    clock.increment(1_000);
    await runtime.steer(callId, 'finish');
    expect(await runtime.wait(callId, { timeoutMs: 1_000 })).toMatchObject({ status: 'succeeded' });
    expect(readBy).toEqual([
      ['moon', 'fail'],
      ['sun', 'finish'],
    ]);
  });

  it('refuses a message to no call, to a tool that takes none, that does not fit, or to an ended call', async () => {
    const { tool } = steeredTool();
    const plain = gatedTool('plain', { mode: 'background' });
    const { runtime } = testRuntime([tool, plain.tool]);
    expect(await refusalOf(runtime.steer('nope', 'hello'))).toEqual({
      code: 'call_not_found',
      message: 'No call "nope" is known: give the call_id its acknowledgement gave.',
    });
    const { callId: plainId } = await runtime.call({ name: 'plain', sessionId: 's' });
    expect(await refusalOf(runtime.steer(plainId, 'hello'))).toEqual({
      code: 'not_steerable',
      message:
        'The tool "plain" takes no messages while it runs: to change what it does, cancel the call and start a new one.',
    });
    const { callId } = await runtime.call({ name: 'research', args: { topic: 'tides' }, sessionId: 's' });
    expect(await refusalOf(runtime.steer(callId, ''))).toMatchObject({
      code: 'invalid_arguments',
      message: expect.stringMatching(
        /^The message does not fit what "research" takes: .+\. Fix it and send it again\.$/,
      ),
    });
    await runtime.steer(callId, 'finish');
    await runtime.wait(callId, { timeoutMs: 1_000 });
    expect(await refusalOf(runtime.steer(callId, 'more'))).toEqual({
      code: 'call_ended',
      message: `The call "${callId}" has already ended (succeeded) and reads no more messages: its result is final. Start a new call to change it.`,
    });
    // The refused messages were not kept: the call read one message in all.
    expect((await runtime.get(callId))?.messagesRead).toBe(1);
  });

  it('ends a wait for a message at its timeout, on the simulated clock, and at a cancel', async () => {
    const outcomes: string[] = [];
    const tool = defineTool({
      name: 'listener',
      description: 'Waits for a message',
      input: z.object({}),
      messages: z.string(),
      execution: { mode: 'background' },
      async execute(_args, ctx) {
        for (;;) {
          try {
            await ctx.nextMessage({ timeoutMs: 5_000 });
          } catch (error) {
            outcomes.push(error instanceof BatonError ? error.code : String(error));
            if (ctx.signal.aborted) throw error;
          }
        }
      },
    });
    const { runtime, clock, events } = testRuntime([tool]);
    const { callId } = await runtime.call({ name: 'listener', sessionId: 's' });
    await settle();
    clock.increment(5_000);
    await settle();
    expect(outcomes).toEqual(['event_timeout']);
    await runtime.cancel(callId);
    await settle();
    expect(outcomes).toEqual(['event_timeout', 'event_cancelled']);
    expect(typesOf(events, callId).filter((type) => type === 'cancelled')).toHaveLength(1);
  });

  it('refuses nextMessage in a tool that declares no messages', async () => {
    let refusal: unknown;
    const tool = defineTool({
      name: 'deaf',
      description: 'Takes no messages',
      input: z.object({}),
      async execute(_args, ctx) {
        refusal = await ctx.nextMessage().catch((error: unknown) => error);
        return 'ok';
      },
    });
    const { runtime } = testRuntime([tool]);
    await runtime.call({ name: 'deaf', sessionId: 's' });
    expect(isBatonError(refusal) && refusal.code).toBe('not_steerable');
  });
});

describe('steering across processes on a shared store', () => {
  it("wakes the tool that another process runs: the sender stores the message, then tells the call's owner", async () => {
    const { store, tell } = sharedStore({ answers: true });
    const { tool, readBy } = steeredTool();
    const worker = testRuntime([tool], { store, role: 'worker' });
    // The client's requests are told to the listeners only when the test says, as PostgreSQL would.
    const requests: CallControl[] = [];
    const clientStore: Store = Object.assign(Object.create(store), {
      async send(control: CallControl) {
        requests.push(control);
        await store.send?.(control);
      },
    });
    const client = testRuntime([tool], { store: clientStore, role: 'client' });
    await Promise.all([worker.runtime.ready, client.runtime.ready]);
    const record = makeCallRecord({
      callId: 'c1',
      toolName: 'research',
      args: { topic: 'tides' },
      attempt: 0,
    });
    await store.write({ calls: [record] });
    tell({ type: 'queued' });
    await settle();
    expect((await store.getCall('c1'))?.ownerId).toBe(worker.runtime.instanceId);

    expect(await client.runtime.steer('c1', 'moon')).toEqual({ callId: 'c1', messageSeq: 1 });
    await settle();
    expect(readBy).toEqual([[]]);
    expect(requests).toEqual([
      { type: 'control', callId: 'c1', action: 'resolved', key: expect.stringContaining('message%3A1') },
    ]);
    for (const request of requests.splice(0)) tell(request);
    await settle();
    expect(readBy).toEqual([['moon']]);

    await client.runtime.steer('c1', 'finish');
    for (const request of requests.splice(0)) tell(request);
    expect(await worker.runtime.wait('c1', { timeoutMs: 1_000 })).toMatchObject({
      status: 'succeeded',
      output: { read: ['moon', 'finish'] },
    });
  });
});

describe('steering when the owner could not be told', () => {
  it('gives the tool a message whose sender could not tell the owner (its pool closed): its wait reads the store again', async () => {
    const { store, tell } = sharedStore({ answers: true });
    const { tool, readBy } = steeredTool();
    const worker = testRuntime([tool], { store, role: 'worker' });
    // A client that drains: what it stores is stored, but it can tell no one.
    const clientStore: Store = Object.assign(Object.create(store), {
      async send() {
        throw new Error('Cannot use a pool after calling end on the pool');
      },
    });
    const client = testRuntime([tool], { store: clientStore, role: 'client' });
    await Promise.all([worker.runtime.ready, client.runtime.ready]);
    await store.write({
      calls: [makeCallRecord({ callId: 'c1', toolName: 'research', args: { topic: 'tides' }, attempt: 0 })],
    });
    tell({ type: 'queued' });
    await settle();
    expect(await client.runtime.steer('c1', 'moon')).toEqual({ callId: 'c1', messageSeq: 1 });
    await settle();
    expect(readBy).toEqual([[]]);
    // Within a second the wait reads the store again and finds it; then the next, at once.
    worker.clock.increment(1_000);
    await settle();
    expect(readBy).toEqual([['moon']]);
    await client.runtime.steer('c1', 'finish');
    for (let second = 0; second < 3 && readBy[0]?.length !== 2; second++) {
      worker.clock.increment(2_000);
      await settle();
    }
    expect(await worker.runtime.wait('c1', { timeoutMs: 1_000 })).toMatchObject({
      status: 'succeeded',
      output: { read: ['moon', 'finish'] },
    });
  });
});

describe('a message sent as its call ends elsewhere', () => {
  it('is refused, not answered 202, by a process that still holds a copy of the call another process ended', async () => {
    const { store, tell } = sharedStore({ answers: true });
    const { tool, readBy } = steeredTool();
    const worker = testRuntime([tool], { store, role: 'worker' });
    await worker.runtime.ready;
    const record = makeCallRecord({
      callId: 'c1',
      toolName: 'research',
      args: { topic: 'tides' },
      attempt: 0,
    });
    await store.write({ calls: [record] });
    tell({ type: 'queued' });
    await settle();
    expect(readBy).toEqual([[]]);
    // An outage: this worker was taken for gone, and another process recovered the call and ended
    // it `interrupted`. This worker has not heard yet: it still holds its live copy of the call.
    const running = await store.getCall('c1');
    if (!running) throw new Error('the call was not stored');
    await store.write({
      calls: [
        {
          ...running,
          ownerId: 'the-other-process',
          status: 'failed',
          error: { code: 'interrupted', message: 'The process running the call stopped.' },
          endedAt: running.updatedAt,
        },
      ],
    });
    expect(await refusalOf(worker.runtime.steer('c1', 'moon'))).toMatchObject({ code: 'call_ended' });
  });
});

describe('a message sent again with its idempotency key', () => {
  it('is stored once and answered with the same number, by this process or another, even once it was read', async () => {
    const { store, tell } = sharedStore({ answers: true });
    const { tool, readBy } = steeredTool();
    const worker = testRuntime([tool], { store, role: 'worker' });
    const first = testRuntime([tool], { store, role: 'client' });
    const other = testRuntime([tool], { store, role: 'client' });
    await Promise.all([worker.runtime.ready, first.runtime.ready, other.runtime.ready]);
    await store.write({
      calls: [makeCallRecord({ callId: 'c1', toolName: 'research', args: { topic: 'tides' }, attempt: 0 })],
    });
    tell({ type: 'queued' });
    await settle();
    const moon = { idempotencyKey: 'msg-1' };
    expect(await first.runtime.steer('c1', 'moon', moon)).toEqual({ callId: 'c1', messageSeq: 1 });
    // The worker reads it (its wait reads the store again: nothing tells it here).
    worker.clock.increment(1_000);
    await settle();
    expect(readBy).toEqual([['moon']]);
    // Sent again, after the sender heard an error: at the same process, and at another.
    expect(await first.runtime.steer('c1', 'moon', moon)).toEqual({ callId: 'c1', messageSeq: 1 });
    expect(await other.runtime.steer('c1', 'moon', moon)).toEqual({ callId: 'c1', messageSeq: 1 });
    // The next message takes the next number, and the tool reads each once.
    expect(await other.runtime.steer('c1', 'finish', { idempotencyKey: 'msg-2' })).toEqual({
      callId: 'c1',
      messageSeq: 2,
    });
    for (let tries = 0; tries < 3 && readBy[0]?.length !== 2; tries++) {
      worker.clock.increment(2_000);
      await settle();
    }
    expect(await worker.runtime.wait('c1', { timeoutMs: 1_000 })).toMatchObject({
      status: 'succeeded',
      output: { read: ['moon', 'finish'] },
    });
  });

  it('refuses a key that is empty or too long, with invalid_arguments', async () => {
    const { tool } = steeredTool();
    const { runtime } = testRuntime([tool]);
    const { callId } = await runtime.call({ name: 'research', args: { topic: 'tides' }, sessionId: 's' });
    for (const idempotencyKey of ['', 'k'.repeat(256)]) {
      const refusal = await refusalOf(runtime.steer(callId, 'moon', { idempotencyKey }));
      expect(refusal).toEqual({
        code: 'invalid_arguments',
        message: 'idempotencyKey must be a string of 1 to 255 characters.',
      });
    }
  });
});

describe('steer_background: a model steers what it started', () => {
  it('sends the message and says so; a refusal is words for the model', async () => {
    const { tool } = steeredTool();
    const plain = gatedTool('plain', { mode: 'background' });
    const { runtime } = testRuntime([tool, plain.tool], { builtins: ['steer_background'] });
    const use = async (args: object) => {
      const reply = await runtime.call({ name: 'steer_background', args, sessionId: 'mine' });
      return reply.status === 'succeeded' ? reply.output : { refused: reply.error?.message };
    };
    const { callId } = await runtime.call({ name: 'research', args: { topic: 'tides' }, sessionId: 'mine' });
    expect(await use({ call_id: callId, message: 'finish' })).toEqual({
      call_id: callId,
      message_seq: 1,
      status: 'sent',
      note: 'The message is stored; the call reads it while it runs. Its result still comes as before (check_background shows how far it got).',
    });
    await runtime.wait(callId, { timeoutMs: 1_000 });
    expect(await use({ call_id: callId, message: 'again' })).toEqual({
      refused: `The call "${callId}" has already ended (succeeded) and reads no more messages: its result is final. Start a new call to change it.`,
    });
    const { callId: plainId } = await runtime.call({ name: 'plain', sessionId: 'mine' });
    expect(await use({ call_id: plainId, message: 'hello' })).toEqual({
      refused:
        'The tool "plain" takes no messages while it runs: to change what it does, cancel the call and start a new one.',
    });
    // Another session's call is out of reach, as for the other control tools.
    const { callId: theirs } = await runtime.call({ name: 'plain', sessionId: 'theirs' });
    expect(await use({ call_id: theirs, message: 'hello' })).toEqual({
      refused: `No background call "${theirs}" in this session.`,
    });
  });
});
