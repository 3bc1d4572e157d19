import { defineTool, type ExecutionOptions } from '@baton/contracts';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { deferred } from '../src/testing.js';
import { gatedTool, settle, testRuntime } from './helpers.js';

/** A tool that records how many of its runs (and of all watched runs) overlap, measured inside the tool. */
function watchedTool(
  name: string,
  overlap: { now: number; max: number; log: string[] },
  execution: ExecutionOptions = {},
) {
  const gates: Array<() => void> = [];
  const tool = defineTool({
    name,
    description: name,
    input: z.object({ i: z.number() }).passthrough(),
    execution,
    async execute({ i }, ctx) {
      overlap.now++;
      overlap.max = Math.max(overlap.max, overlap.now);
      overlap.log.push(`start ${ctx.sessionId}:${name}:${i}`);
      const gate = deferred();
      gates.push(gate.resolve);
      await gate.promise;
      overlap.log.push(`end ${ctx.sessionId}:${name}:${i}`);
      overlap.now--;
      return i;
    },
  });
  return { tool, gates };
}

/** Finishes the running calls one at a time, in a shuffled order, until all are done. */
async function drain(gates: Array<() => void>, pending: Promise<unknown>, seed = 7): Promise<void> {
  let state = seed;
  let done = false;
  void pending.then(() => {
    done = true;
  });
  while (!done) {
    await settle();
    if (gates.length === 0) continue;
    state = (state * 1103515245 + 12345) % 2 ** 31;
    const [finish] = gates.splice(state % gates.length, 1);
    finish?.();
  }
}

describe('batches (the batch rules)', () => {
  it('returns the replies in request order when the calls end in reverse order', async () => {
    const { tool, runs } = gatedTool('step');
    const { runtime } = testRuntime([tool]);
    const replies = runtime.callBatch(
      [0, 1, 2, 3].map((i) => ({ name: 'step', args: { i } })),
      { sessionId: 's', messageId: 'turn_1' },
    );
    await settle();
    for (const run of [...runs].reverse()) {
      run.resolve((run.args as { i: number }).i);
      await settle();
    }
    expect((await replies).map((reply) => reply.output)).toEqual([0, 1, 2, 3]);
    expect((await runtime.list({ sessionId: 's' })).calls.every((call) => call.messageId === 'turn_1')).toBe(
      true,
    );
  });

  it('puts an unknown tool or invalid arguments in its place as an error reply, and runs the rest', async () => {
    const echo = defineTool({
      name: 'echo',
      description: 'e',
      input: z.object({ v: z.string() }),
      execute: ({ v }) => v,
    });
    const { runtime } = testRuntime([echo]);
    const replies = await runtime.callBatch(
      [
        { name: 'echo', args: { v: 'a' } },
        { name: 'nope', args: {} },
        { name: 'echo', args: { v: 1 } },
        { name: 'echo', args: { v: 'd' } },
      ],
      { sessionId: 's' },
    );
    expect(replies.map((reply) => reply.error?.code ?? reply.output)).toEqual([
      'a',
      'tool_not_found',
      'invalid_arguments',
      'd',
    ]);
  });

  it('with continueOnFailure false, the first failure cancels the calls not started, naming the failed call; running calls finish', async () => {
    const { tool, runs } = gatedTool('job');
    const { runtime } = testRuntime([tool], { limits: { concurrency: 2 } });
    const replies = runtime.callBatch(
      [0, 1, 2, 3].map((i) => ({ name: 'job', args: { i }, callId: `job_${i}` })),
      { sessionId: 's', continueOnFailure: false },
    );
    await settle();
    expect(runs).toHaveLength(2);
    runs[0]?.reject(new Error('broken'));
    await settle();
    expect(runs).toHaveLength(2);
    runs[1]?.resolve('finished anyway');
    const [first, second, third, fourth] = await replies;
    expect(first?.error?.code).toBe('internal_error');
    expect(second).toMatchObject({ status: 'succeeded', output: 'finished anyway' });
    for (const reply of [third, fourth]) {
      expect(reply).toMatchObject({
        status: 'cancelled',
        error: {
          code: 'cancelled',
          message: 'The tool call was cancelled: call job_0 (job) of the same batch failed',
        },
      });
    }
  });

  it('with continueOnFailure false, a refused call also stops the calls after it', async () => {
    const { tool, runs } = gatedTool('job');
    const { runtime } = testRuntime([tool]);
    const replies = await runtime.callBatch(
      [
        { name: 'missing', args: {}, callId: 'bad' },
        { name: 'job', args: {} },
      ],
      { sessionId: 's', continueOnFailure: false },
    );
    expect(replies.map((reply) => reply.status)).toEqual(['failed', 'cancelled']);
    expect(runs).toHaveLength(0);
  });
});

describe('concurrency', () => {
  it('never runs more calls at once than the limit; a waiting call starts when a slot frees', async () => {
    const overlap = { now: 0, max: 0, log: [] };
    const { tool, gates } = watchedTool('work', overlap);
    const { runtime } = testRuntime([tool], { limits: { concurrency: 3 } });
    const calls = Array.from({ length: 30 }, (_, i) =>
      runtime.call({ name: 'work', args: { i }, sessionId: `s${i % 4}` }),
    );
    await settle();
    expect(runtime.stats()).toMatchObject({ running: 3, queued: 27 });
    await drain(gates, Promise.all(calls));
    expect(overlap.max).toBe(3);
    expect((await Promise.all(calls)).every((reply) => reply.status === 'succeeded')).toBe(true);
  });

  it("keeps a tool's maxConcurrency: its extra calls wait while other tools run", async () => {
    const overlap = { now: 0, max: 0, log: [] };
    const limited = watchedTool('limited', overlap, { maxConcurrency: 2 });
    const other = gatedTool('other');
    const { runtime } = testRuntime([limited.tool, other.tool]);
    const calls = Array.from({ length: 6 }, (_, i) =>
      runtime.call({ name: 'limited', args: { i }, sessionId: 's' }),
    );
    const otherCall = runtime.call({ name: 'other', sessionId: 's' });
    await settle();
    expect(limited.gates).toHaveLength(2);
    expect(other.runs).toHaveLength(1);
    other.runs[0]?.resolve('ok');
    await drain(limited.gates, Promise.all(calls));
    expect(overlap.max).toBe(2);
    expect((await otherCall).status).toBe('succeeded');
  });

  it('runs exclusive calls alone in their session, in order, while other sessions go on', async () => {
    const overlap = { now: 0, max: 0, log: [] as string[] };
    const parallel = watchedTool('read', overlap);
    const exclusive = watchedTool('write', overlap, { concurrency: 'exclusive' });
    const { runtime } = testRuntime([parallel.tool, exclusive.tool]);
    const order = ['read', 'read', 'write', 'read', 'write', 'write', 'read'];
    const batch = runtime.callBatch(
      order.map((name, i) => ({ name, args: { i } })),
      { sessionId: 'a' },
    );
    const elsewhere = runtime.call({ name: 'read', args: { i: 99 }, sessionId: 'b' });
    const gates = () => [...parallel.gates.splice(0), ...exclusive.gates.splice(0)];
    const all = Promise.all([batch, elsewhere]);
    let finished = false;
    void all.then(() => {
      finished = true;
    });
    while (!finished) {
      await settle();
      for (const finish of gates()) finish();
    }
    // Session a: every write ran with nothing else of session a beside it, in batch order.
    const running = new Set<string>();
    for (const entry of overlap.log.filter((line) => line.includes(' a:'))) {
      const [what, call] = entry.split(' ') as [string, string];
      if (what === 'start') {
        if (call.includes(':write:')) expect([...running]).toEqual([]);
        else expect([...running].some((other) => other.includes(':write:'))).toBe(false);
        running.add(call);
      } else {
        running.delete(call);
      }
    }
    const starts = overlap.log
      .filter((line) => line.startsWith('start a:'))
      .map((line) => Number(line.split(':')[2]));
    expect(starts.indexOf(2)).toBeGreaterThan(Math.max(starts.indexOf(0), starts.indexOf(1)));
    expect(starts.indexOf(3)).toBeGreaterThan(starts.indexOf(2));
    expect(starts.indexOf(5)).toBeGreaterThan(starts.indexOf(4));
    expect(overlap.log).toContain('start b:read:99');
    expect((await batch).map((reply) => reply.output)).toEqual([0, 1, 2, 3, 4, 5, 6]);
  });
});

describe('admission limits', () => {
  it('refuses a call past maxQueued with limit_exceeded, and a waiting call starts when a slot frees', async () => {
    const { tool, runs } = gatedTool('work');
    const { runtime } = testRuntime([tool], { limits: { concurrency: 1, maxQueued: 2 } });
    const running = runtime.call({ name: 'work', sessionId: 's' });
    const waiting = [
      runtime.call({ name: 'work', sessionId: 's' }),
      runtime.call({ name: 'work', sessionId: 's' }),
    ];
    const refused = await runtime.call({ name: 'work', sessionId: 's' });
    expect(refused).toMatchObject({
      status: 'failed',
      error: {
        code: 'limit_exceeded',
        message: 'Too many tool calls are waiting (the limit is 2). Try again after some of them finish.',
      },
    });
    await settle();
    expect(runs).toHaveLength(1);
    runs[0]?.resolve('first');
    await running;
    await settle();
    expect(runs).toHaveLength(2);
    runs[1]?.resolve('second');
    expect((await waiting[0])?.output).toBe('second');
    runs[2]?.resolve('third');
    expect((await waiting[1])?.output).toBe('third');
  });

  it("refuses a sixth background run in a session with the background runs' words", async () => {
    const { tool, runs } = gatedTool('crawl', { mode: 'background' });
    const { runtime } = testRuntime([tool]);
    for (let i = 0; i < 5; i++)
      expect((await runtime.call({ name: 'crawl', sessionId: 's1' })).status).toBe('backgrounded');
    expect(await runtime.call({ name: 'crawl', sessionId: 's1' })).toMatchObject({
      status: 'failed',
      error: {
        code: 'limit_exceeded',
        message:
          'Maximum 5 active background runs per session. Wait for an existing run to finish before starting another.',
      },
    });
    expect((await runtime.call({ name: 'crawl', sessionId: 's2' })).status).toBe('backgrounded');
    runs[0]?.resolve('done');
    await settle();
    expect((await runtime.call({ name: 'crawl', sessionId: 's1' })).status).toBe('backgrounded');
  });

  it("refuses a background run past the runtime's backgroundPerWorker with the background runs' words", async () => {
    const { tool } = gatedTool('crawl', { mode: 'background' });
    const { runtime } = testRuntime([tool], { limits: { backgroundPerWorker: 3 } });
    for (let i = 0; i < 3; i++) await runtime.call({ name: 'crawl', sessionId: `s${i}` });
    expect((await runtime.call({ name: 'crawl', sessionId: 'another' })).error).toEqual({
      code: 'limit_exceeded',
      message:
        'Worker is already running the maximum 3 active background runs. Try again after an existing run finishes.',
    });
  });
});

describe('fairness', () => {
  it("serves sessions in turn: B's 10 calls all start before A's 1,000 are half drained", async () => {
    const started: string[] = [];
    const gates: Array<() => void> = [];
    const tool = defineTool({
      name: 'work',
      description: 'w',
      input: z.object({}),
      execute: (_, ctx) => {
        started.push(ctx.sessionId);
        const gate = deferred();
        gates.push(gate.resolve);
        return gate.promise;
      },
    });
    const { runtime } = testRuntime([tool], { limits: { concurrency: 4 } });
    const a = Array.from({ length: 1_000 }, () => runtime.call({ name: 'work', sessionId: 'A' }));
    const b = Array.from({ length: 10 }, () => runtime.call({ name: 'work', sessionId: 'B' }));
    while (started.filter((session) => session === 'B').length < 10) {
      await settle();
      for (const finish of gates.splice(0)) finish();
    }
    const aStartedBeforeLastB = started.lastIndexOf('B') - 9;
    expect(aStartedBeforeLastB).toBeLessThan(500);
    while (gates.length > 0 || runtime.stats().active > 0) {
      await settle();
      for (const finish of gates.splice(0)) finish();
    }
    expect((await Promise.all([...a, ...b])).every((reply) => reply.status === 'succeeded')).toBe(true);
  });
});

describe('the inline budget counts queue time', () => {
  it('an auto call that waited in the queue still replies within its budget', async () => {
    const blocker = gatedTool('blocker');
    const slow = gatedTool('slow', { mode: 'auto' });
    const { runtime, clock } = testRuntime([blocker.tool, slow.tool], { limits: { concurrency: 1 } });
    void runtime.call({ name: 'blocker', sessionId: 's' });
    let replied = false;
    const pending = runtime.call({ name: 'slow', sessionId: 's2' }).then((reply) => {
      replied = true;
      return reply;
    });
    clock.increment(299);
    await settle();
    expect(replied).toBe(false);
    clock.increment(1);
    expect(await pending).toMatchObject({ status: 'backgrounded' });
    expect(slow.runs).toHaveLength(0);
    blocker.runs[0]?.resolve('ok');
    await settle();
    expect(slow.runs).toHaveLength(1);
    slow.runs[0]?.resolve('late but delivered');
    await settle();
    const [notification] = await runtime.notifications.list({ sessionId: 's2' });
    expect(notification?.outcome).toBe('succeeded');
  });
});

describe('what the model sees of a long output (the batch rules)', () => {
  it('cuts it at maxOutputChars with a marker; the record keeps the whole', async () => {
    const long = defineTool({
      name: 'long',
      description: 'l',
      input: z.object({}),
      execute: () => 'x'.repeat(150),
    });
    const object = defineTool({
      name: 'object',
      description: 'o',
      input: z.object({}),
      execute: () => ({ rows: Array.from({ length: 50 }, (_, i) => i) }),
    });
    const { runtime } = testRuntime([long, object], { maxOutputChars: 100 });
    const reply = await runtime.call({ name: 'long', sessionId: 's' });
    expect(reply.output).toBe(`${'x'.repeat(100)}\n[output truncated: 50 of 150 characters cut]`);
    expect((await runtime.get(reply.callId))?.result).toBe('x'.repeat(150));
    const objectReply = await runtime.call({ name: 'object', sessionId: 's' });
    expect(objectReply.output).toMatch(
      /^\{"rows":\[0,1,2,.*\n\[output truncated: \d+ of \d+ characters cut\]$/s,
    );
    expect((await runtime.get(objectReply.callId))?.result).toEqual({
      rows: Array.from({ length: 50 }, (_, i) => i),
    });
  });

  it('leaves a short output as it is, at the default limit of 32,000', async () => {
    const medium = defineTool({
      name: 'medium',
      description: 'm',
      input: z.object({}),
      execute: () => 'y'.repeat(32_000),
    });
    const { runtime } = testRuntime([medium]);
    expect((await runtime.call({ name: 'medium', sessionId: 's' })).output).toBe('y'.repeat(32_000));
  });
});

describe('fair shares of the slots', () => {
  const echo = defineTool({ name: 'echo', description: 'e', input: z.object({}), execute: () => 'at once' });

  it('leaves a quarter of the slots when one session floods them with slow calls, so another answers at once', async () => {
    const slow = gatedTool('slow');
    const { runtime } = testRuntime([slow.tool, echo]);
    const flood = Array.from({ length: 200 }, () => runtime.call({ name: 'slow', sessionId: 'flood' }));
    await settle();
    expect(runtime.stats()).toMatchObject({ running: 48, queued: 152 });
    expect(await runtime.call({ name: 'echo', sessionId: 'other' })).toMatchObject({
      status: 'succeeded',
      output: 'at once',
    });
    for (const run of slow.runs) run.resolve('done');
    await settle();
    expect(slow.runs.length).toBeGreaterThan(48);
    for (let i = 0; i < 10 && runtime.stats().active > 0; i++) {
      for (const run of slow.runs) run.resolve('done');
      await settle();
    }
    expect((await Promise.all(flood)).every((reply) => reply.status === 'succeeded')).toBe(true);
  });

  it('caps a tenant across its sessions, so another tenant answers within its budget', async () => {
    const slow = gatedTool('slow', { mode: 'auto' });
    const { runtime } = testRuntime([slow.tool, echo], {
      tenantOf: (sessionId) => sessionId.slice(0, sessionId.indexOf('/')),
      limits: { concurrency: 8, runningPerSession: 8, runningPerTenant: 6 },
    });
    for (let i = 0; i < 40; i++) void runtime.call({ name: 'slow', sessionId: `a/s${i % 4}` });
    await settle();
    expect(runtime.stats()).toMatchObject({ running: 6, queued: 34 });
    expect((await runtime.call({ name: 'echo', sessionId: 'b/s0' })).status).toBe('succeeded');
    // Without tenants, the same sessions take every slot.
    const untenanted = testRuntime([slow.tool], { limits: { concurrency: 8, runningPerSession: 8 } }).runtime;
    for (let i = 0; i < 40; i++) void untenanted.call({ name: 'slow', sessionId: `a/s${i % 4}` });
    await settle();
    expect(untenanted.stats()).toMatchObject({ running: 8 });
  });

  it('leaves small pools whole: one session may use both of two slots', async () => {
    const slow = gatedTool('slow');
    const { runtime } = testRuntime([slow.tool], { limits: { concurrency: 2 } });
    void runtime.call({ name: 'slow', sessionId: 's' });
    void runtime.call({ name: 'slow', sessionId: 's' });
    await settle();
    expect(runtime.stats()).toMatchObject({ running: 2 });
  });
});
