import { defineTool, ToolError } from '@baton/contracts';
import { memoryStore } from '@baton/store';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { deferred } from '../src/testing.js';
import { settle, storedEvents, testRuntime, typesOf } from './helpers.js';

describe('the context a tool gets (the durable context)', () => {
  it('has the call, session, tool, attempt, max attempts, a replay key and what prepare returned', async () => {
    const seen = deferred<Record<string, unknown>>();
    const probe = defineTool({
      name: 'probe',
      description: 'p',
      input: z.object({ url: z.string() }),
      execution: { retry: { maxAttempts: 4 } },
      prepare: ({ url }) => ({ host: new URL(url).host }),
      execute(_, ctx) {
        const { callId, sessionId, toolName, attempt, maxAttempts, replayKey, prepared, signal } = ctx;
        seen.resolve({
          callId,
          sessionId,
          toolName,
          attempt,
          maxAttempts,
          replayKey,
          prepared,
          aborted: signal.aborted,
        });
        return 'ok';
      },
    });
    const { runtime } = testRuntime([probe]);
    await runtime.call({
      name: 'probe',
      args: { url: 'https://docs.example.com/a' },
      sessionId: 's1',
      callId: 'c1',
    });
    expect(await seen.promise).toEqual({
      callId: 'c1',
      sessionId: 's1',
      toolName: 'probe',
      attempt: 1,
      maxAttempts: 4,
      replayKey: 'baton:s1:c1:probe',
      prepared: { host: 'docs.example.com' },
      aborted: false,
    });
    expect((await runtime.get('c1'))?.prepared).toEqual({ host: 'docs.example.com' });
  });
});

describe('retries', () => {
  function flaky(failures: number, error: () => Error, retry = { maxAttempts: 3, initialIntervalMs: 1_000 }) {
    const attempts: Array<{ attempt: number; replayKey: string }> = [];
    const tool = defineTool({
      name: 'flaky',
      description: 'f',
      input: z.object({}),
      execution: { retry },
      execute: async (_, ctx) => {
        attempts.push({ attempt: ctx.attempt, replayKey: ctx.replayKey });
        if (attempts.length <= failures) throw error();
        return 'finally';
      },
    });
    return { tool, attempts };
  }

  it('runs a tool that fails twice three times, with backoff on the clock, and replies once', async () => {
    const { tool, attempts } = flaky(2, () => new Error('connection reset'));
    const { runtime, clock, events } = testRuntime([tool]);
    let replied = false;
    const pending = runtime.call({ name: 'flaky', sessionId: 's', callId: 'c1' }).then((reply) => {
      replied = true;
      return reply;
    });
    await settle();
    expect(attempts).toHaveLength(1);
    clock.increment(999);
    await settle();
    expect(attempts).toHaveLength(1);
    clock.increment(1);
    await settle();
    expect(attempts).toHaveLength(2);
    clock.increment(1_999);
    await settle();
    expect([attempts.length, replied]).toEqual([2, false]);
    clock.increment(1);
    expect(await pending).toMatchObject({ status: 'succeeded', output: 'finally' });
    expect(attempts.map((attempt) => attempt.attempt)).toEqual([1, 2, 3]);
    expect(new Set(attempts.map((attempt) => attempt.replayKey))).toEqual(new Set(['baton:s:c1:flaky']));
    expect((await runtime.get('c1'))?.attempt).toBe(3);
    expect(typesOf(events, 'c1')).toEqual([
      'queued',
      'started',
      'retrying',
      'started',
      'retrying',
      'started',
      'succeeded',
    ]);
    const retrying = events.filter((event) => event.type === 'retrying');
    expect(
      retrying.map((event) => (event.type === 'retrying' ? [event.attempt, event.delayMs] : [])),
    ).toEqual([
      [2, 1_000],
      [3, 2_000],
    ]);
  });

  it('stops after maxAttempts and fails with the last error', async () => {
    const { tool, attempts } = flaky(5, () => new Error('still down'), {
      maxAttempts: 2,
      initialIntervalMs: 10,
    });
    const { runtime, clock } = testRuntime([tool]);
    const pending = runtime.call({ name: 'flaky', sessionId: 's' });
    await settle();
    clock.increment(10);
    const reply = await pending;
    expect(reply.error?.code).toBe('internal_error');
    expect(attempts).toHaveLength(2);
  });

  it('does not retry a tool_error unless the tool says it may', async () => {
    const plain = flaky(1, () => new ToolError('no such file'));
    const { runtime } = testRuntime([plain.tool]);
    expect((await runtime.call({ name: 'flaky', sessionId: 's' })).error).toEqual({
      code: 'tool_error',
      message: 'no such file',
    });
    expect(plain.attempts).toHaveLength(1);

    const retryable = flaky(1, () => new ToolError('rate limited', { retryable: true }));
    const second = testRuntime([retryable.tool]);
    const pending = second.runtime.call({ name: 'flaky', sessionId: 's' });
    await settle();
    second.clock.increment(1_000);
    expect((await pending).status).toBe('succeeded');
    expect(retryable.attempts).toHaveLength(2);
  });

  it("uses the runtime's policy for tools that set none; without any policy a call runs once", async () => {
    const once = defineTool({
      name: 'once',
      description: 'o',
      input: z.object({}),
      execute: () => {
        throw new Error('boom');
      },
    });
    const plain = testRuntime([once]);
    expect((await plain.runtime.call({ name: 'once', sessionId: 's' })).error?.code).toBe('internal_error');

    let runs = 0;
    const counted = defineTool({
      name: 'counted',
      description: 'c',
      input: z.object({}),
      execute: () => {
        runs++;
        throw new Error('boom');
      },
    });
    const withPolicy = testRuntime([counted], { retry: { maxAttempts: 2, initialIntervalMs: 0 } });
    const pending = withPolicy.runtime.call({ name: 'counted', sessionId: 's' });
    await settle();
    withPolicy.clock.increment(0);
    await pending;
    expect(runs).toBe(2);
  });

  it('a call cancelled while it waits for its next attempt ends cancelled, and runs no more', async () => {
    const { tool, attempts } = flaky(5, () => new Error('down'), {
      maxAttempts: 5,
      initialIntervalMs: 1_000,
    });
    const { runtime, clock } = testRuntime([tool]);
    const pending = runtime.call({ name: 'flaky', sessionId: 's', callId: 'c1' });
    await settle();
    expect(await runtime.cancel('c1')).toBe(true);
    clock.increment(10_000);
    await settle();
    expect((await pending).status).toBe('cancelled');
    expect(attempts).toHaveLength(1);
    expect(runtime.stats().timers).toBe(0);
  });
});

describe('prepare', () => {
  it('ends the call without running it when prepare fails, with the error shown to the model', async () => {
    let ran = false;
    const guarded = defineTool({
      name: 'guarded',
      description: 'g',
      input: z.object({ path: z.string() }),
      prepare: ({ path }) => {
        if (path.startsWith('/etc')) throw new ToolError(`${path} is outside the workspace`);
        return { path };
      },
      execute: () => {
        ran = true;
        return 'read';
      },
    });
    const { runtime } = testRuntime([guarded]);
    const reply = await runtime.call({ name: 'guarded', args: { path: '/etc/passwd' }, sessionId: 's' });
    expect(reply).toMatchObject({
      status: 'failed',
      error: { code: 'tool_error', message: '/etc/passwd is outside the workspace' },
    });
    expect(ran).toBe(false);
    expect((await runtime.get(reply.callId))?.attempt).toBe(0);
  });
});

describe('durable steps (the durable context)', () => {
  it('refuses an empty or repeated step id before the step runs', async () => {
    const ran: string[] = [];
    const errors = deferred<string[]>();
    const tool = defineTool({
      name: 'stepper',
      description: 's',
      input: z.object({}),
      async execute(_, ctx) {
        const codes: string[] = [];
        for (const id of ['', '  ', 'fetch', 'fetch']) {
          try {
            await ctx.step(id, () => ran.push(id));
          } catch (error) {
            codes.push(`${(error as { code: string }).code}: ${(error as Error).message}`);
          }
        }
        errors.resolve(codes);
        return 'done';
      },
    });
    const { runtime } = testRuntime([tool]);
    await runtime.call({ name: 'stepper', sessionId: 's' });
    expect(await errors.promise).toEqual([
      'durable_effect_empty_step_id: durable effect step id must be non-empty',
      'durable_effect_empty_step_id: durable effect step id must be non-empty',
      'durable_effect_duplicate_step_id: durable effect step id `fetch` was already used by this tool call',
    ]);
    expect(ran).toEqual(['fetch']);
  });

  it('runs a finished step once across retries, returning its stored result, and keeps it in the store', async () => {
    const runs = { charge: 0, notify: 0 };
    const tool = defineTool({
      name: 'checkout',
      description: 'c',
      input: z.object({}),
      execution: { retry: { maxAttempts: 3, initialIntervalMs: 100 } },
      async execute(_, ctx) {
        const receipt = await ctx.step('charge', () => {
          runs.charge++;
          return { receipt: 'r-1' };
        });
        await ctx.step('notify', () => {
          runs.notify++;
          if (runs.notify === 1) throw new Error('mail server down');
        });
        return receipt;
      },
    });
    const store = memoryStore();
    const { runtime, clock } = testRuntime([tool], { store });
    const pending = runtime.call({ name: 'checkout', sessionId: 's', callId: 'c1' });
    await settle();
    clock.increment(100);
    expect(await pending).toMatchObject({ status: 'succeeded', output: { receipt: 'r-1' } });
    expect(runs).toEqual({ charge: 1, notify: 2 });
    expect((await storedEvents(runtime, 'c1')).filter((event) => event.type === 'started')).toHaveLength(2);
    expect((await store.listSteps('c1')).map((step) => [step.stepId, step.value])).toEqual([
      ['charge', { receipt: 'r-1' }],
      ['notify', undefined],
    ]);
  });
});
