import { defineTool } from '@baton/contracts';
import { createRuntime, type Runtime } from '@baton/runtime';
import { deferred, memoryStore } from '@baton/runtime/testing';
import { filter, firstValueFrom } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createMcpHandler, type McpHandler, TASKS_EXTENSION } from '../src/index.js';
import { MODERN, modernClient, TENANTS } from './modern-client.js';

const deleteFile = defineTool({
  name: 'delete_file',
  description: 'Deletes a file, once a person approves',
  input: z.object({ filename: z.string(), token: z.string().meta({ writeOnly: true }).optional() }),
  execution: { mode: 'auto', needsApproval: true },
  execute: async ({ filename }) => `deleted ${filename}`,
});

const opened: Array<{ runtime: Runtime; mcp: McpHandler }> = [];
afterEach(async () => {
  for (const { runtime, mcp } of opened.splice(0)) {
    await mcp.close();
    await runtime.close();
  }
});

async function serve() {
  const runtime = createRuntime({ tools: [deleteFile], store: memoryStore() });
  await runtime.ready;
  const mcp = createMcpHandler({
    runtime,
    authenticate: (request) => TENANTS[request.headers.get('authorization') ?? ''],
  });
  opened.push({ runtime, mcp });
  return { runtime, mcp };
}

/** A 2026-07-28 client; its results come back as they are, its errors thrown. */
function client(mcp: McpHandler, token = 'Bearer token-a', tasks = true) {
  const request = modernClient(
    mcp,
    { authorization: token },
    tasks ? { extensions: { [TASKS_EXTENSION]: {} } } : {},
  );
  return async (method: string, params: Record<string, unknown>) => {
    const reply = await request(method, params);
    if (reply.kind === 'error') throw Object.assign(new Error(reply.error.message), reply.error);
    return reply.result as Record<string, unknown> & { taskId: string; status: string };
  };
}

const ended = (runtime: Runtime, tenant: string, taskId: string) =>
  firstValueFrom(
    runtime
      .follow({ callId: `${tenant}/${taskId}` })
      .pipe(filter((event) => event.type === 'succeeded' || event.type === 'failed')),
  );

describe('tasks on 2026-07-28', () => {
  it('lists no control tool that would give a task client its result a second way', async () => {
    const { mcp } = await serve();
    const namesFor = async (tasks: boolean) => {
      const listed = (await client(mcp, 'Bearer token-a', tasks)('tools/list', {})) as unknown as {
        tools: Array<{ name: string }>;
      };
      return listed.tools.map((tool) => tool.name);
    };
    expect(await namesFor(true)).toEqual(['delete_file']);
    expect(await namesFor(false)).toEqual([
      'delete_file',
      'check_background',
      'wait_background',
      'cancel_background',
    ]);
  });

  it("shows a running task's latest update as its status message, and its result once it ends", async () => {
    const gate = deferred<void>();
    const build = defineTool({
      name: 'build',
      description: 'Builds, telling what it finds as it goes',
      input: z.object({}),
      execution: { mode: 'background' },
      async execute(_args, ctx) {
        ctx.update('compiled 40 of 90 files');
        await gate.promise;
        return 'built';
      },
    });
    const runtime = createRuntime({ tools: [build], store: memoryStore() });
    await runtime.ready;
    const mcp = createMcpHandler({
      runtime,
      authenticate: (request) => TENANTS[request.headers.get('authorization') ?? ''],
    });
    opened.push({ runtime, mcp });
    const request = client(mcp);
    const created = await request('tools/call', { name: 'build', arguments: {} });
    await expect
      .poll(async () => (await request('tasks/get', { taskId: created.taskId })).statusMessage)
      .toBe('update 1: compiled 40 of 90 files');
    gate.resolve();
    await ended(runtime, 'acme', created.taskId);
    expect(await request('tasks/get', { taskId: created.taskId })).toMatchObject({ status: 'completed' });
  });

  it('an approval is an input request: tasks/get shows its elicitation (secrets redacted), tasks/update accept runs the call', async () => {
    const { runtime, mcp } = await serve();
    const request = client(mcp);
    const created = await request('tools/call', {
      name: 'delete_file',
      arguments: { filename: 'a.txt', token: 'tok-SECRET-0001' },
    });
    expect(created).toMatchObject({ resultType: 'task', status: 'working' });
    const waiting = await request('tasks/get', { taskId: created.taskId });
    expect(waiting).toMatchObject({
      resultType: 'complete',
      status: 'input_required',
      inputRequests: {
        approval: {
          method: 'elicitation/create',
          params: { mode: 'form', message: expect.stringContaining('"token":"[redacted]"') },
        },
      },
    });
    expect(JSON.stringify(waiting)).not.toContain('tok-SECRET-0001');
    expect(
      await request('tasks/update', {
        taskId: created.taskId,
        inputResponses: { approval: { action: 'accept', content: {} } },
      }),
    ).toEqual(expect.objectContaining({ resultType: 'complete' }));
    await ended(runtime, 'acme', created.taskId);
    expect(await request('tasks/get', { taskId: created.taskId })).toMatchObject({
      status: 'completed',
      result: { resultType: 'complete', content: [{ type: 'text', text: 'deleted a.txt' }] },
    });
  });

  it('a decline rejects the call with its reason; an approval given through the API answers the same request', async () => {
    const { runtime, mcp } = await serve();
    const request = client(mcp);
    const declined = await request('tools/call', { name: 'delete_file', arguments: { filename: 'b.txt' } });
    await request('tasks/update', {
      taskId: declined.taskId,
      inputResponses: { approval: { action: 'decline', content: { reason: 'not that file' } } },
    });
    await ended(runtime, 'acme', declined.taskId);
    expect(await request('tasks/get', { taskId: declined.taskId })).toMatchObject({
      status: 'completed',
      result: { isError: true, content: [{ type: 'text', text: expect.stringContaining('not that file') }] },
    });

    const approvedElsewhere = await request('tools/call', {
      name: 'delete_file',
      arguments: { filename: 'c.txt' },
    });
    expect(await runtime.inputs.approve(`acme/${approvedElsewhere.taskId}`)).toBe(true);
    await ended(runtime, 'acme', approvedElsewhere.taskId);
    expect(await request('tasks/get', { taskId: approvedElsewhere.taskId })).toMatchObject({
      status: 'completed',
    });
  });

  it('keeps each tenant to its own tasks, and refuses the task methods to a client that did not declare tasks', async () => {
    const { mcp } = await serve();
    const created = await client(mcp)('tools/call', {
      name: 'delete_file',
      arguments: { filename: 'd.txt' },
    });
    const other = client(mcp, 'Bearer token-b');
    for (const [method, params] of [
      ['tasks/get', {}],
      ['tasks/update', { inputResponses: { approval: { action: 'accept' } } }],
      ['tasks/cancel', {}],
    ] as const) {
      await expect(other(method, { taskId: created.taskId, ...params })).rejects.toMatchObject({
        code: -32602,
      });
    }
    const untasked = client(mcp, 'Bearer token-a', false);
    await expect(untasked('tasks/get', { taskId: created.taskId })).rejects.toMatchObject({ code: -32021 });
    // Still waiting: the other tenant's accept and cancel reached nothing.
    expect(await client(mcp)('tasks/get', { taskId: created.taskId })).toMatchObject({
      status: 'input_required',
    });
  });

  it('pushes notifications/tasks for the tasks of a subscriptions/listen, and ends the stream when they end', async () => {
    const { runtime, mcp } = await serve();
    const created = await client(mcp)('tools/call', {
      name: 'delete_file',
      arguments: { filename: 'e.txt' },
    });
    const theirs = await client(mcp, 'Bearer token-b')('tools/call', {
      name: 'delete_file',
      arguments: { filename: 'f.txt' },
    });
    const listen = await mcp.fetch(
      new Request('http://localhost/mcp', {
        method: 'POST',
        headers: {
          host: 'localhost',
          authorization: 'Bearer token-a',
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': MODERN,
          'mcp-method': 'subscriptions/listen',
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 'listen-1',
          method: 'subscriptions/listen',
          params: {
            notifications: { taskIds: [created.taskId, theirs.taskId, 'no-such-task'] },
            _meta: {
              'io.modelcontextprotocol/protocolVersion': MODERN,
              'io.modelcontextprotocol/clientInfo': { name: 'test', version: '1.0.0' },
              'io.modelcontextprotocol/clientCapabilities': { extensions: { [TASKS_EXTENSION]: {} } },
            },
          },
        }),
      }),
    );
    expect(listen.headers.get('content-type')).toBe('text/event-stream');
    expect(await runtime.inputs.approve(`acme/${created.taskId}`)).toBe(true);
    const messages = (await listen.text())
      .split('\n')
      .filter((line) => line.startsWith('data: '))
      .map(
        (line) =>
          JSON.parse(line.slice(6)) as {
            method?: string;
            params?: Record<string, unknown>;
            result?: unknown;
          },
      );
    expect(messages[0]).toMatchObject({
      method: 'notifications/subscriptions/acknowledged',
      params: { notifications: { taskIds: [created.taskId] } },
    });
    const tasks = messages.filter((message) => message.method === 'notifications/tasks');
    expect(tasks.at(-1)?.params).toMatchObject({
      taskId: created.taskId,
      status: 'completed',
      result: { content: [{ type: 'text', text: 'deleted e.txt' }] },
    });
    expect(tasks.every((message) => message.params?.taskId === created.taskId)).toBe(true);
    expect(messages.at(-1)).toMatchObject({ id: 'listen-1', result: { resultType: 'complete' } });
  });
});
