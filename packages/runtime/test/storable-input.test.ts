import { defineTool, MAX_ID_CHARS } from '@baton/contracts';
import { memoryStore } from '@baton/store';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { testRuntime } from './helpers.js';

/**
 * What a caller sends must be something every store can keep (PostgreSQL refuses a NUL and a lone
 * surrogate; no store takes JSON nested without end), or the call is refused before it runs.
 */

function counted() {
  const seen: unknown[] = [];
  const tool = defineTool({
    name: 'note',
    description: 'n',
    input: z.object({}).passthrough(),
    execute: (args) => {
      seen.push(args);
      return 'ok';
    },
  });
  return { tool, seen };
}

/** Objects nested `levels` deep: the arguments object itself is the first level. */
function nested(levels: number): Record<string, unknown> {
  let value: Record<string, unknown> = {};
  for (let i = 1; i < levels; i++) value = { d: value };
  return value;
}

describe('arguments every store can keep', () => {
  it.each([
    [{ text: 'a\u0000b' }, 'text', 'the string contains a NUL character (\\u0000), which cannot be stored'],
    [
      { list: ['ok', '\uD83D'] },
      'list.1',
      'the string contains a lone surrogate (text that is not well-formed UTF-16)',
    ],
    [
      { inner: { 'k\u0000': 1 } },
      'inner',
      'a key contains a NUL character (\\u0000), which cannot be stored',
    ],
  ])(
    'refuses %j with invalid_arguments at %s, without running the tool or keeping the arguments',
    async (args, path, message) => {
      const { tool, seen } = counted();
      const store = memoryStore();
      const { runtime } = testRuntime([tool], { store });
      const reply = await runtime.call({ name: 'note', args, sessionId: 's' });
      expect(reply.error).toEqual({
        code: 'invalid_arguments',
        message: `Invalid arguments for tool "note": ${path}: ${message}`,
        issues: [{ path, message }],
      });
      expect(seen).toEqual([]);
      const record = await store.getCall(reply.callId);
      expect(record).toMatchObject({ status: 'failed', attempt: 0 });
      expect(record?.args).toBeUndefined();
    },
  );

  it('takes well-formed pairs (emoji) and escaped backslashes as they are', async () => {
    const { tool, seen } = counted();
    const { runtime } = testRuntime([tool]);
    const args = { text: '😀 \\u0000 is six characters' };
    expect((await runtime.call({ name: 'note', args, sessionId: 's' })).status).toBe('succeeded');
    expect(seen).toEqual([args]);
  });

  it('refuses arguments nested deeper than maxArgsDepth (64 by default), however deep they go', async () => {
    const { tool, seen } = counted();
    const { runtime } = testRuntime([tool], { maxArgsDepth: 8 });
    expect((await runtime.call({ name: 'note', args: nested(8), sessionId: 's' })).status).toBe('succeeded');
    const reply = await runtime.call({ name: 'note', args: nested(100_000), sessionId: 's' });
    expect(reply.error?.issues).toEqual([
      { path: 'd.d.d.d.d.d.d.d', message: 'arguments are nested more than 8 levels deep (the limit)' },
    ]);
    expect(seen).toHaveLength(1);
    const defaults = testRuntime([tool]).runtime;
    expect((await defaults.call({ name: 'note', args: nested(64), sessionId: 's' })).status).toBe(
      'succeeded',
    );
    expect((await defaults.call({ name: 'note', args: nested(65), sessionId: 's' })).error?.code).toBe(
      'invalid_arguments',
    );
  });

  it('keeps no arguments on the record of an unknown tool when no store could keep them', async () => {
    const store = memoryStore();
    const { runtime } = testRuntime([], { store });
    const kept = await runtime.call({ name: 'gone', args: { a: 1 }, sessionId: 's' });
    const dropped = await runtime.call({ name: 'gone', args: { a: '\u0000' }, sessionId: 's' });
    expect([kept.error?.code, dropped.error?.code]).toEqual(['tool_not_found', 'tool_not_found']);
    expect((await store.getCall(kept.callId))?.args).toEqual({ a: 1 });
    expect((await store.getCall(dropped.callId))?.args).toBeUndefined();
  });

  it('fails a call whose prepare() returns what is not JSON with persistence_failed, before it runs', async () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    let runs = 0;
    const tool = defineTool({
      name: 'prepared',
      description: 'p',
      input: z.object({}),
      prepare: () => cyclic,
      execute: () => ++runs,
    });
    const { runtime } = testRuntime([tool]);
    const reply = await runtime.call({ name: 'prepared', sessionId: 's' });
    expect(reply.error?.code).toBe('persistence_failed');
    expect(reply.error?.message).toMatch(
      /^The call could not be saved: the value prepare\(\) returned is not JSON: /,
    );
    expect(runs).toBe(0);
  });
});

describe('ids every store can keep and every URL can name', () => {
  it.each([
    [
      'callId',
      { callId: 'c'.repeat(MAX_ID_CHARS + 1) },
      `is ${MAX_ID_CHARS + 1} characters long, more than the limit of ${MAX_ID_CHARS}`,
    ],
    ['callId', { callId: '' }, 'must not be empty'],
    ['callId', { callId: 'x\uDC00' }, 'is not well-formed UTF-16 (it has a lone surrogate)'],
    ['sessionId', { sessionId: 'a\u0000b' }, 'must not contain control characters'],
    ['sessionId', { sessionId: 'line\nbreak' }, 'must not contain control characters'],
    ['sessionId', { sessionId: 7 }, 'must be a string, not number'],
    ['messageId', { messageId: 'm'.repeat(500) }, 'is 500 characters long, more than the limit of 128'],
    ['name', { name: undefined }, 'must be a string, not undefined'],
  ])('refuses a bad %s with invalid_arguments, leaving no record', async (path, change, message) => {
    const { tool, seen } = counted();
    const store = memoryStore();
    const { runtime } = testRuntime([tool], { store });
    const request = { name: 'note', sessionId: 's', ...change } as never;
    const reply = await runtime.call(request);
    expect(reply).toEqual({
      callId:
        typeof (change as { callId?: unknown }).callId === 'string'
          ? (change as { callId: string }).callId
          : '',
      status: 'failed',
      output: { error: `Invalid tool call: ${path} ${message}` },
      error: {
        code: 'invalid_arguments',
        message: `Invalid tool call: ${path} ${message}`,
        issues: [{ path, message }],
      },
    });
    expect(seen).toEqual([]);
    expect((await store.listCalls()).calls).toEqual([]);
  });

  it('takes an id of exactly 128 characters, and finds its call again', async () => {
    const { tool } = counted();
    const { runtime } = testRuntime([tool]);
    const callId = 'é'.repeat(MAX_ID_CHARS);
    expect((await runtime.call({ name: 'note', sessionId: 's', callId })).status).toBe('succeeded');
    expect((await runtime.get(callId))?.status).toBe('succeeded');
  });

  it('refuses only the requests of a batch whose ids are bad', async () => {
    const { tool, seen } = counted();
    const { runtime } = testRuntime([tool]);
    const replies = await runtime.callBatch(
      [
        { name: 'note', args: { n: 1 } },
        { name: 'note', callId: 'x'.repeat(200) },
        { name: 'note', args: { n: 3 } },
      ],
      { sessionId: 's' },
    );
    expect(replies.map((reply) => [reply.status, reply.error?.code])).toEqual([
      ['succeeded', undefined],
      ['failed', 'invalid_arguments'],
      ['succeeded', undefined],
    ]);
    expect(seen).toEqual([{ n: 1 }, { n: 3 }]);
  });
});
