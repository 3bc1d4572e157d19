import { defineTool } from '@baton/contracts';
import { createRuntime, type Runtime } from '@baton/runtime';
import { memoryStore } from '@baton/runtime/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createMcpHandler, type McpHandler } from '../src/index.js';
import { modernClient, TENANTS } from './modern-client.js';

const askName = defineTool({
  name: 'ask_name',
  description: 'Asks for a name, then greets',
  input: z.object({}),
  async execute(_args, ctx) {
    const answer = await ctx.input(
      {
        kind: 'elicitation',
        message: 'What is your name?',
        requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
      },
      { name: 'user_name' },
    );
    return `Hello, ${String(answer.content?.name)}!`;
  },
});

const opened: Array<{ runtime: Runtime; mcp: McpHandler }> = [];
afterEach(async () => {
  for (const { runtime, mcp } of opened.splice(0)) {
    await mcp.close();
    await runtime.close();
  }
});

/** Asks whose report before it begins (`prepare`), then runs as a task. */
const report = defineTool({
  name: 'report',
  description: "Writes a user's report, as a task",
  input: z.object({}),
  execution: { mode: 'background' },
  async prepare(_args, ctx) {
    const answer = await ctx.input(
      { kind: 'elicitation', message: 'Whose report?', requestedSchema: { type: 'object', properties: {} } },
      { name: 'user_name' },
    );
    return { user: String(answer.content?.name) };
  },
  execute: async (_args, ctx) => `report for ${ctx.prepared.user}`,
});

async function serve() {
  const runtime = createRuntime({ tools: [askName, report], store: memoryStore() });
  await runtime.ready;
  const mcp = createMcpHandler({
    runtime,
    authenticate: (request) => TENANTS[request.headers.get('authorization') ?? ''],
  });
  opened.push({ runtime, mcp });
  return { runtime, mcp };
}

type Round = { resultType: string; inputRequests: Record<string, { method: string }>; requestState: string };

describe('input rounds on 2026-07-28 (multi round-trip requests)', () => {
  it('asks for what the tool asks, and the round that answers goes on with the same call', async () => {
    const { runtime, mcp } = await serve();
    const request = modernClient(mcp, { authorization: 'Bearer token-a' }, { elicitation: {} });
    const first = await request('tools/call', { name: 'ask_name', arguments: {} });
    expect(first.kind).toBe('result');
    const round = (first as { result: Round }).result;
    expect(round).toMatchObject({
      resultType: 'input_required',
      inputRequests: { user_name: { method: 'elicitation/create' } },
    });
    expect(typeof round.requestState).toBe('string');

    const answered = await request('tools/call', {
      name: 'ask_name',
      arguments: {},
      inputResponses: { user_name: { action: 'accept', content: { name: 'Ada' } } },
      requestState: round.requestState,
    });
    expect(answered).toMatchObject({
      kind: 'result',
      result: { resultType: 'complete', content: [{ type: 'text', text: 'Hello, Ada!' }] },
    });
    // One call, asked once and answered once.
    expect((await runtime.list()).calls.map((call) => call.status)).toEqual(['succeeded']);
  });

  it("refuses another tenant's round, and a tampered one", async () => {
    const { mcp } = await serve();
    const request = modernClient(mcp, { authorization: 'Bearer token-a' }, { elicitation: {} });
    const { requestState } = (
      (await request('tools/call', { name: 'ask_name', arguments: {} })) as { result: Round }
    ).result;
    const answer = { user_name: { action: 'accept', content: { name: 'Mallory' } } };
    const theirs = modernClient(mcp, { authorization: 'Bearer token-b' }, { elicitation: {} });
    for (const [client, state] of [
      [theirs, requestState],
      [request, `${requestState}x`],
    ] as const) {
      const refused = await client('tools/call', {
        name: 'ask_name',
        arguments: {},
        inputResponses: answer,
        requestState: state,
      });
      expect(refused).toMatchObject({ kind: 'error', error: { code: -32602 } });
    }
  });

  it('answers a client that cannot answer with -32021, naming the capability', async () => {
    const { mcp } = await serve();
    const request = modernClient(mcp, { authorization: 'Bearer token-a' }, {});
    expect(await request('tools/call', { name: 'ask_name', arguments: {} })).toMatchObject({
      kind: 'error',
      error: { code: -32021, data: { requiredCapabilities: { elicitation: {} } } },
    });
  });

  it('asks what prepare asks before the call begins, with no state; the round that answers begins it, as a task', async () => {
    const { runtime, mcp } = await serve();
    const tasks = { extensions: { 'io.modelcontextprotocol/tasks': {} } };
    const request = modernClient(mcp, { authorization: 'Bearer token-a' }, { elicitation: {}, ...tasks });
    const first = await request('tools/call', { name: 'report', arguments: {} });
    expect(first).toMatchObject({
      kind: 'result',
      result: {
        resultType: 'input_required',
        inputRequests: { user_name: { method: 'elicitation/create' } },
      },
    });
    expect((first as { result: Record<string, unknown> }).result).not.toHaveProperty('requestState');
    expect((await runtime.list()).calls).toEqual([]);

    const answered = await request('tools/call', {
      name: 'report',
      arguments: {},
      inputResponses: { user_name: { action: 'accept', content: { name: 'Ada' } } },
    });
    expect(answered).toMatchObject({ kind: 'result', result: { resultType: 'task', status: 'working' } });
    const [call] = (await runtime.list()).calls;
    expect(await runtime.wait(call?.callId as string)).toMatchObject({ output: 'report for Ada' });

    // A client that cannot answer a form is told what it lacks.
    const formless = modernClient(mcp, { authorization: 'Bearer token-a' }, tasks);
    expect(await formless('tools/call', { name: 'report', arguments: {} })).toMatchObject({
      kind: 'error',
      error: { code: -32021, data: { requiredCapabilities: { elicitation: {} } } },
    });
  });
});
