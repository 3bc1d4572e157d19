import { defineTool } from '@baton/contracts';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { testRuntime } from './helpers.js';

const search = defineTool({
  name: 'search_docs',
  description: 's',
  input: z.object({ query: z.string(), filters: z.object({ lang: z.enum(['en', 'fr']) }).optional() }),
  execute: ({ query }) => query,
});
const jsonTool = defineTool({
  name: 'json_tool',
  description: 'j',
  input: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] },
  execute: (args) => args,
});

describe('bad input is a reply with a stable code, never an exception', () => {
  it('an unknown tool is tool_not_found, naming the tools there are', async () => {
    const { runtime } = testRuntime([search, jsonTool]);
    const reply = await runtime.call({ name: 'serch_docs', args: {}, sessionId: 's' });
    expect(reply).toMatchObject({
      status: 'failed',
      error: {
        code: 'tool_not_found',
        message: 'Tool "serch_docs" not found. Available tools: search_docs, json_tool',
      },
    });
    expect(await runtime.get(reply.callId)).toMatchObject({
      status: 'failed',
      attempt: 0,
      toolName: 'serch_docs',
    });
  });

  it('invalid arguments are invalid_arguments with each issue and its path', async () => {
    const { runtime } = testRuntime([search]);
    const reply = await runtime.call({
      name: 'search_docs',
      args: { query: 5, filters: { lang: 'de' } },
      sessionId: 's',
    });
    expect(reply.status).toBe('failed');
    expect(reply.error?.code).toBe('invalid_arguments');
    expect(reply.error?.issues?.map((issue) => issue.path)).toEqual(['query', 'filters.lang']);
    expect(reply.error?.message).toMatch(
      /^Invalid arguments for tool "search_docs": query: .+; filters\.lang: .+/,
    );
  });

  it('JSON Schema tools report their issues the same way', async () => {
    const { runtime } = testRuntime([jsonTool]);
    const reply = await runtime.call({ name: 'json_tool', args: { n: 'x' }, sessionId: 's' });
    expect(reply.error).toEqual({
      code: 'invalid_arguments',
      message: 'Invalid arguments for tool "json_tool": n: must be number',
      issues: [{ path: 'n', message: 'must be number' }],
    });
  });

  it.each([
    [null, 'null'],
    [[1, 2], 'an array'],
    ['query=x', 'a string'],
    [7, 'a number'],
  ])('arguments that are not an object (%j) are invalid_arguments', async (args, kind) => {
    const { runtime } = testRuntime([search]);
    const reply = await runtime.call({ name: 'search_docs', args, sessionId: 's' });
    expect(reply.error).toMatchObject({
      code: 'invalid_arguments',
      message: expect.stringContaining(`not ${kind}`),
    });
  });

  it('arguments larger than maxArgsBytes are invalid_arguments, and are not kept', async () => {
    const { runtime } = testRuntime([search], { maxArgsBytes: 1024 });
    const reply = await runtime.call({
      name: 'search_docs',
      args: { query: 'é'.repeat(600) },
      sessionId: 's',
    });
    expect(reply.error).toMatchObject({
      code: 'invalid_arguments',
      message: expect.stringContaining('more than the limit of 1024 bytes'),
    });
    expect((await runtime.get(reply.callId))?.args).toBeUndefined();
    expect(
      (await runtime.call({ name: 'search_docs', args: { query: 'é'.repeat(300) }, sessionId: 's' })).status,
    ).toBe('succeeded');
  });

  it('the default limit is 1 MiB', async () => {
    const { runtime } = testRuntime([search]);
    const reply = await runtime.call({
      name: 'search_docs',
      args: { query: 'x'.repeat(1024 * 1024) },
      sessionId: 's',
    });
    expect(reply.error?.code).toBe('invalid_arguments');
  });

  it('__proto__ and constructor keys pollute nothing, even for a tool that merges its arguments', async () => {
    const merged: object[] = [];
    const merger = defineTool({
      name: 'merger',
      description: 'm',
      input: { type: 'object' },
      execute: (args) => {
        const target = Object.assign({}, args);
        merged.push(target);
        return Object.getPrototypeOf(target) === Object.prototype;
      },
    });
    const { runtime } = testRuntime([merger, search]);
    const hostile = JSON.parse(
      '{"query":"x","__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}},"nested":{"__proto__":{"polluted":true}}}',
    );
    const reply = await runtime.call({ name: 'merger', args: hostile, sessionId: 's' });
    expect(reply).toMatchObject({ status: 'succeeded', output: true });
    expect(({} as { polluted?: boolean }).polluted).toBeUndefined();
    expect((merged[0] as { polluted?: boolean }).polluted).toBeUndefined();
    expect((merged[0] as { nested: { polluted?: boolean } }).nested.polluted).toBeUndefined();
    expect((await runtime.call({ name: 'search_docs', args: hostile, sessionId: 's' })).status).toBe(
      'succeeded',
    );
    expect(({} as { polluted?: boolean }).polluted).toBeUndefined();
  });

  it('omitted arguments are {}', async () => {
    const none = defineTool({ name: 'none', description: 'n', input: z.object({}), execute: (args) => args });
    const { runtime } = testRuntime([none]);
    expect(await runtime.call({ name: 'none', sessionId: 's' })).toMatchObject({
      status: 'succeeded',
      output: {},
    });
  });
});
