import { type CallEvent, defineTool } from '@baton/contracts';
import { filter, firstValueFrom } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { settle, testRuntime } from './helpers.js';

const FORM = { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } as const;

describe('ctx.input: a running tool asks its caller for input', () => {
  it('puts the request on an input_requested event, and goes on with the answer given under its key', async () => {
    const greeter = defineTool({
      name: 'greeter',
      description: 'Asks for a name, then greets',
      input: z.object({}),
      async execute(_args, ctx) {
        const answer = await ctx.input({ kind: 'elicitation', message: 'Your name?', requestedSchema: FORM });
        return answer.action === 'accept'
          ? `hello ${String(answer.content?.name)}`
          : `no name (${answer.action})`;
      },
    });
    const { runtime } = testRuntime([greeter]);
    const asked = firstValueFrom(
      runtime.events$.pipe(
        filter(
          (event): event is Extract<CallEvent, { type: 'input_requested' }> =>
            event.type === 'input_requested',
        ),
      ),
    );
    const reply = runtime.call({ name: 'greeter', sessionId: 's', callId: 'greet-1' });
    const { key, request } = await asked;
    expect(request).toEqual({ kind: 'elicitation', message: 'Your name?', requestedSchema: FORM });
    expect(key).toBe(runtime.inputs.key('greet-1', 'input:input-1'));
    expect((await runtime.get('greet-1'))?.waitingFor).toBe(key);

    await runtime.inputs.resolve(key, { value: { action: 'accept', content: { name: 'Ada' } } });
    expect(await reply).toMatchObject({ status: 'succeeded', output: 'hello Ada' });
  });

  it('numbers the requests of an attempt, the same way on the next, which gets the answers it had', async () => {
    let runs = 0;
    const twoQuestions = defineTool({
      name: 'two_questions',
      description: 'Asks twice; the first run fails after both answers',
      input: z.object({}),
      execution: { retry: { maxAttempts: 2, initialIntervalMs: 0 } },
      async execute(_args, ctx) {
        runs++;
        const first = await ctx.input({ kind: 'roots' });
        const second = await ctx.input({ kind: 'sampling', params: { messages: [] } });
        if (runs === 1) throw new Error('lost the connection');
        return { roots: first.roots.length, model: second.model };
      },
    });
    const { runtime, clock } = testRuntime([twoQuestions]);
    const keys: string[] = [];
    runtime.events$.subscribe((event) => {
      if (event.type !== 'input_requested') return;
      keys.push(event.key);
      const answer =
        event.request.kind === 'roots' ? { roots: [{ uri: 'file:///tmp' }] } : { model: 'test-model' };
      if (keys.length <= 2) void runtime.inputs.resolve(event.key, { value: answer });
    });
    const replying = runtime.call({ name: 'two_questions', sessionId: 's', callId: 'q-1' });
    await settle();
    // The retry's wait, on the simulated clock.
    clock.increment(1);
    const reply = await replying;
    expect(reply).toMatchObject({ status: 'succeeded', output: { roots: 1, model: 'test-model' } });
    expect(runs).toBe(2);
    // The second attempt asked under the same keys, and found the answers the first one got.
    expect(keys).toEqual([...keys.slice(0, 2), ...keys.slice(0, 2)]);
    expect(new Set(keys).size).toBe(2);
  });

  it('lists what a running call waits for and has no answer to, until it has one', async () => {
    const twoAtOnce = defineTool({
      name: 'two_at_once',
      description: 'Asks for a first and a last name at once',
      input: z.object({}),
      async execute(_args, ctx) {
        const ask = (name: string) =>
          ctx.input({ kind: 'elicitation', message: name, requestedSchema: FORM }, { name });
        const [first, last] = await Promise.all([ask('first'), ask('last')]);
        return `${String(first.content?.name)} ${String(last.content?.name)}`;
      },
    });
    const { runtime } = testRuntime([twoAtOnce]);
    const reply = runtime.call({ name: 'two_at_once', sessionId: 's', callId: 'names' });
    await settle();
    const pending = await runtime.inputs.pending('names');
    expect(pending.map((input) => input.name)).toEqual(['first', 'last']);
    await runtime.inputs.resolve(pending[0]?.key ?? '', {
      value: { action: 'accept', content: { name: 'Ada' } },
    });
    await settle();
    expect((await runtime.inputs.pending('names')).map((input) => input.name)).toEqual(['last']);
    await runtime.inputs.resolve(pending[1]?.key ?? '', {
      value: { action: 'accept', content: { name: 'Lovelace' } },
    });
    expect(await reply).toMatchObject({ status: 'succeeded', output: 'Ada Lovelace' });
    expect(await runtime.inputs.pending('names')).toEqual([]);
  });
});

describe("prepare's ctx.input: input asked before the call begins", () => {
  const reporter = defineTool({
    name: 'reporter',
    description: 'Asks whose report, then writes it in the background',
    input: z.object({}),
    execution: { mode: 'background' },
    async prepare(_args, ctx) {
      const answer = await ctx.input(
        { kind: 'elicitation', message: 'Whose report?', requestedSchema: FORM },
        { name: 'user_name' },
      );
      return { name: answer.action === 'accept' ? String(answer.content?.name) : 'nobody' };
    },
    execute: (_args, ctx) => `report for ${ctx.prepared.name}`,
  });

  it('answers input_required naming what it asks, and records nothing, until the request carries the answer', async () => {
    const { runtime } = testRuntime([reporter]);
    const first = await runtime.call({ name: 'reporter', sessionId: 's', callId: 'r1' });
    expect(first).toMatchObject({
      callId: 'r1',
      status: 'failed',
      error: {
        code: 'input_required',
        inputs: { user_name: { kind: 'elicitation', message: 'Whose report?', requestedSchema: FORM } },
      },
    });
    expect(first.error?.message).toContain('"user_name"');
    expect(await runtime.get('r1')).toBeUndefined();

    // A wrong name, or an answer that is no object, is asked for again.
    const wrong = await runtime.call({
      name: 'reporter',
      sessionId: 's',
      callId: 'r1',
      inputs: { name: 'x', user_name: 3 },
    });
    expect(wrong.error?.code).toBe('input_required');

    const answered = await runtime.call({
      name: 'reporter',
      sessionId: 's',
      callId: 'r1',
      inputs: { user_name: { action: 'accept', content: { name: 'Alice' } } },
    });
    expect(answered.status).toBe('backgrounded');
    expect(await runtime.wait('r1')).toMatchObject({ status: 'succeeded', output: 'report for Alice' });
    expect(await runtime.get('r1')).toMatchObject({ prepared: { name: 'Alice' } });
  });

  it('ends the request with input_required even when prepare catches the refusal and throws its own error', async () => {
    const stubborn = defineTool({
      name: 'stubborn',
      description: 'Turns a missing answer into its own error',
      input: z.object({}),
      async prepare(_args, ctx) {
        try {
          return await ctx.input({ kind: 'roots' });
        } catch {
          throw new Error('no roots');
        }
      },
      execute: () => 'ran',
    });
    const { runtime } = testRuntime([stubborn]);
    const reply = await runtime.call({ name: 'stubborn', sessionId: 's' });
    expect(reply.error).toMatchObject({ code: 'input_required', inputs: { 'input-1': { kind: 'roots' } } });
    expect((await runtime.list({ sessionId: 's' })).calls).toEqual([]);
  });
});
