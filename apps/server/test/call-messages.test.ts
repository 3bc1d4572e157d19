import { defineTool } from '@baton/contracts';
import { createRuntime, type Runtime } from '@baton/runtime';
import { SimulatedClock } from '@baton/runtime/testing';
import type { FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { demoTools } from '../src/demo-tools.js';
import { createServer } from '../src/server.js';

const research = defineTool({
  name: 'research',
  description: 'Researches a topic until it is told to finish',
  input: z.object({ topic: z.string() }),
  messages: z.object({ text: z.string().min(1) }),
  execution: { mode: 'background' },
  async execute({ topic }, ctx) {
    const read: string[] = [];
    for (;;) {
      const { text } = await ctx.nextMessage();
      if (text === 'finish') return { topic, read };
      read.push(text);
      ctx.update(`now reading ${text}`);
    }
  },
});

let runtime: Runtime;
let app: FastifyInstance;

beforeEach(async () => {
  runtime = createRuntime({ tools: [...demoTools, research], clock: new SimulatedClock() });
  await runtime.ready;
  app = createServer({ runtime });
});

afterEach(async () => {
  await app.close();
  await runtime.close();
});

const post = (url: string, payload?: object) => app.inject({ method: 'POST', url, payload: payload ?? {} });
const start = (name: string, args: object, callId: string) =>
  post('/v1/calls', { name, args, sessionId: 's', callId });

describe('POST /v1/calls/:id/messages: steering a running call', () => {
  it('answers 202 with the number of the message once it is stored; the tool reads each in order', async () => {
    await start('research', { topic: 'tides' }, 'r1');
    const sent = await post('/v1/calls/r1/messages', { message: { text: 'the moon' } });
    expect([sent.statusCode, sent.json()]).toEqual([202, { callId: 'r1', messageSeq: 1 }]);
    expect((await post('/v1/calls/r1/messages', { message: { text: 'finish' } })).json()).toEqual({
      callId: 'r1',
      messageSeq: 2,
    });
    await runtime.wait('r1', { timeoutMs: 1_000 });
    expect((await app.inject('/v1/calls/r1')).json()).toMatchObject({
      status: 'succeeded',
      result: { topic: 'tides', read: ['the moon'] },
      messagesRead: 2,
    });
  });

  it('stores a message sent again with its idempotency key once, and answers the same number', async () => {
    await start('research', { topic: 'tides' }, 'r3');
    const once = await post('/v1/calls/r3/messages', {
      message: { text: 'the moon' },
      idempotencyKey: 'k-1',
    });
    expect([once.statusCode, once.json()]).toEqual([202, { callId: 'r3', messageSeq: 1 }]);
    const again = await app.inject({
      method: 'POST',
      url: '/v1/calls/r3/messages',
      headers: { 'idempotency-key': 'k-1' },
      payload: { message: { text: 'the moon' } },
    });
    expect([again.statusCode, again.json()]).toEqual([202, { callId: 'r3', messageSeq: 1 }]);
    expect((await post('/v1/calls/r3/messages', { message: { text: 'finish' } })).json()).toEqual({
      callId: 'r3',
      messageSeq: 2,
    });
    await runtime.wait('r3', { timeoutMs: 1_000 });
    expect((await app.inject('/v1/calls/r3')).json()).toMatchObject({
      status: 'succeeded',
      result: { read: ['the moon'] },
    });
  });

  it("lists the call's update as a notification while it runs, and streams it as an event", async () => {
    await start('research', { topic: 'tides' }, 'r2');
    await post('/v1/calls/r2/messages', { message: { text: 'the moon' } });
    await expect
      .poll(async () => (await app.inject('/v1/notifications?sessionId=s')).json())
      .toMatchObject([
        { callId: 'r2', outcome: 'running', updateSeq: 1, output: { update: 'now reading the moon' } },
      ]);
    await post('/v1/calls/r2/messages', { message: { text: 'finish' } });
    await runtime.wait('r2', { timeoutMs: 1_000 });
    const stream = (await app.inject('/v1/calls/r2/events')).body;
    expect(stream).toContain('event: update');
    expect(stream).toContain('"value":"now reading the moon"');
  });

  it('refuses with a stable code and words to act on: no call, no messages taken, a bad message, an ended call', async () => {
    const errorOf = async (url: string, payload: object) => {
      const reply = await post(url, payload);
      return [reply.statusCode, reply.json().error];
    };
    expect(await errorOf('/v1/calls/nope/messages', { message: 'x' })).toEqual([
      404,
      { code: 'not_found', message: 'call not found' },
    ]);
    await start('deploy', { env: 'staging' }, 'd1');
    expect(await errorOf('/v1/calls/d1/messages', { message: 'x' })).toEqual([
      409,
      {
        code: 'not_steerable',
        message:
          'The tool "deploy" takes no messages while it runs: to change what it does, cancel the call and start a new one.',
      },
    ]);
    await start('research', { topic: 'tides' }, 'r1');
    expect(await errorOf('/v1/calls/r1/messages', {})).toMatchObject([400, { code: 'invalid_request' }]);
    expect(await errorOf('/v1/calls/r1/messages', { message: { text: '' } })).toMatchObject([
      400,
      { code: 'invalid_arguments', message: expect.stringContaining('does not fit what "research" takes') },
    ]);
    await post('/v1/calls/r1/messages', { message: { text: 'finish' } });
    await runtime.wait('r1', { timeoutMs: 1_000 });
    expect(await errorOf('/v1/calls/r1/messages', { message: { text: 'more' } })).toEqual([
      409,
      {
        code: 'call_ended',
        message:
          'The call "r1" has already ended (succeeded) and reads no more messages: its result is final. Start a new call to change it.',
      },
    ]);
  });
});
