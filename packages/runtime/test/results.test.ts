import { connectionRequired, defineTool, success, ToolError } from '@baton/contracts';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { testRuntime } from './helpers.js';

const tool = (name: string, execute: () => unknown, output?: z.ZodType) =>
  defineTool({ name, description: name, input: z.object({}), ...(output ? { output } : {}), execute });

describe('what a tool returns, and what the model sees of it', () => {
  it('a plain value (sync or async) is a success', async () => {
    const { runtime } = testRuntime([tool('sync', () => 42), tool('async', async () => ({ a: 1 }))]);
    expect(await runtime.call({ name: 'sync', sessionId: 's' })).toMatchObject({
      status: 'succeeded',
      output: 42,
    });
    expect(await runtime.call({ name: 'async', sessionId: 's' })).toMatchObject({
      status: 'succeeded',
      output: { a: 1 },
    });
  });

  it('success() carries images to the model and keeps its raw output on the record only', async () => {
    const image = { base64: 'iVBORw0KGgo=', mediaType: 'image/png' };
    const { runtime } = testRuntime([
      tool('shot', () => success({ taken: true }, { images: [image], rawOutput: 'secret raw bytes' })),
    ]);
    const reply = await runtime.call({ name: 'shot', sessionId: 's' });
    expect(reply).toEqual({
      callId: reply.callId,
      status: 'succeeded',
      output: { taken: true },
      images: [image],
    });
    expect(JSON.stringify(reply)).not.toContain('secret raw bytes');
    expect(await runtime.get(reply.callId)).toMatchObject({
      rawOutput: 'secret raw bytes',
      result: { taken: true },
    });
  });

  it('a ToolError is a tool_error whose message the model sees', async () => {
    const { runtime } = testRuntime([
      tool('picky', () => Promise.reject(new ToolError('no such file: a.txt'))),
    ]);
    const reply = await runtime.call({ name: 'picky', sessionId: 's' });
    expect(reply).toEqual({
      callId: reply.callId,
      status: 'failed',
      output: { error: 'no such file: a.txt' },
      error: { code: 'tool_error', message: 'no such file: a.txt' },
    });
  });

  it.each([
    [
      'an Error',
      () => {
        throw new Error('db password wrong');
      },
    ],
    ['a rejected promise', () => Promise.reject(new TypeError('db password wrong'))],
    [
      'a non-Error value',
      () => {
        throw 'db password wrong';
      },
    ],
  ])(
    'anything else thrown (%s) is an internal_error: generic for the model, details on the record',
    async (_, execute) => {
      const { runtime } = testRuntime([tool('leaky', execute)]);
      const reply = await runtime.call({ name: 'leaky', sessionId: 's' });
      expect(reply).toEqual({
        callId: reply.callId,
        status: 'failed',
        output: { error: 'An internal error occurred while executing the tool' },
        error: { code: 'internal_error', message: 'An internal error occurred while executing the tool' },
      });
      expect(JSON.stringify(reply)).not.toContain('password');
      expect((await runtime.get(reply.callId))?.error?.details?.message).toBe('db password wrong');
    },
  );

  it('connectionRequired() ends the call with connection_required, naming the provider', async () => {
    const { runtime } = testRuntime([tool('gh', () => connectionRequired('github'))]);
    const reply = await runtime.call({ name: 'gh', sessionId: 's' });
    expect(reply).toMatchObject({
      status: 'failed',
      output: { connection_required: 'github' },
      error: {
        code: 'connection_required',
        message: 'The tool needs a connection to github before it can run',
      },
    });
  });

  it('a value its output schema refuses is an internal_error', async () => {
    const { runtime } = testRuntime([
      tool('typed', () => ({ count: 'three' }), z.object({ count: z.number() })),
    ]);
    const reply = await runtime.call({ name: 'typed', sessionId: 's' });
    expect(reply.error).toEqual({
      code: 'internal_error',
      message: 'An internal error occurred while executing the tool',
    });
    expect((await runtime.get(reply.callId))?.error?.details?.message).toMatch(
      /output schema refuses.*count/,
    );
  });
});
