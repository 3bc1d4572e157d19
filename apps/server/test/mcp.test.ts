import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineTool } from '@baton/contracts';
import { createRuntime, type Runtime, type RuntimeOptions } from '@baton/runtime';
import { deferred, SimulatedClock } from '@baton/runtime/testing';
import { sqliteStore } from '@baton/store-sqlite';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  type Progress,
} from '@modelcontextprotocol/sdk/types.js';
import type { FastifyInstance } from 'fastify';
import { filter, firstValueFrom } from 'rxjs';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { demoTools } from '../src/demo-tools.js';
import { createServer } from '../src/server.js';

const dir = mkdtempSync(join(tmpdir(), 'baton-mcp-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A tool that reports one step of progress, then waits until the test lets it finish. */
function gatedTool() {
  const gates: Array<ReturnType<typeof deferred<void>>> = [];
  const tool = defineTool({
    name: 'gated',
    description: 'Reports progress, then waits for the test',
    input: z.object({ label: z.string() }),
    execution: { mode: 'auto', idempotent: false },
    async execute({ label }, ctx) {
      const gate = deferred<void>();
      gates.push(gate);
      ctx.progress({ current: 1, total: 2, label: 'half way' });
      ctx.signal.addEventListener('abort', () => gate.reject(ctx.signal.reason));
      await gate.promise;
      return { label };
    },
  });
  return { tool, gates };
}

/** An echo that may run as a task (`echo` is inline: it never does). */
const autoEcho = defineTool({
  name: 'auto_echo',
  description: 'Echoes, and may run as a task',
  input: z.object({ text: z.string() }),
  execution: { mode: 'auto' },
  execute: async ({ text }) => ({ text }),
});

interface Served {
  runtime: Runtime;
  app: FastifyInstance;
  url: URL;
}

const served: Served[] = [];
const clients: Client[] = [];

afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
  for (const { app, runtime } of served.splice(0)) {
    await app.close();
    await runtime.close();
  }
});

async function serve(
  tools: RuntimeOptions['tools'],
  path = ':memory:',
  options: Omit<RuntimeOptions, 'tools' | 'store'> = {},
): Promise<Served> {
  const runtime = createRuntime({ tools, store: sqliteStore({ path }), inlineBudgetMs: 60_000, ...options });
  await runtime.ready;
  const app = createServer({
    runtime,
    tokens: { 'token-of-tenant-a-0001': 'acme', 'token-of-tenant-b-0002': 'bolt' },
  });
  const address = await app.listen({ host: '127.0.0.1', port: 0 });
  const entry = { runtime, app, url: new URL(`${address}/mcp`) };
  served.push(entry);
  return entry;
}

async function connect(url: URL, token = 'token-of-tenant-a-0001'): Promise<Client> {
  const client = new Client({ name: 'baton-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(url, {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  clients.push(client);
  return client;
}

/** Asks tasks/get until the task is in `status`: each ask is a round trip, nothing sleeps. */
async function pollUntil(client: Client, taskId: string, status: string) {
  for (;;) {
    const task = await client.experimental.tasks.getTask(taskId);
    if (task.status === status) return task;
    expect(task.status).toBe('working');
  }
}

describe('the MCP endpoint, driven by the MCP SDK client', () => {
  it('lists the tools with their task support, and calls one', async () => {
    const { url } = await serve(demoTools);
    const client = await connect(url);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => [tool.name, tool.execution?.taskSupport])).toEqual([
      ['echo', 'forbidden'],
      ['slow_report', 'optional'],
      ['always_fails', 'forbidden'],
      ['has_a_bug', 'forbidden'],
      // It waits for an approval, so it may run as a task.
      ['deploy', 'optional'],
      // A tool may go to the background: a client that takes no task follows it with these.
      ['check_background', 'forbidden'],
      ['wait_background', 'forbidden'],
      ['cancel_background', 'forbidden'],
      ['list_background', 'forbidden'],
    ]);
    expect(await client.callTool({ name: 'echo', arguments: { text: 'over mcp' } })).toMatchObject({
      content: [{ type: 'text', text: '{"text":"over mcp"}' }],
      structuredContent: { text: 'over mcp' },
    });
    expect(await client.callTool({ name: 'always_fails', arguments: {} })).toEqual({
      isError: true,
      content: [{ type: 'text', text: 'this tool always fails' }],
    });
  });

  it('answers an SDK v1 client that takes no task with an acknowledgement naming the tool and call_id that bring the result', async () => {
    const { tool, gates } = gatedTool();
    const clock = new SimulatedClock();
    const { url, runtime } = await serve([tool], ':memory:', { clock, inlineBudgetMs: 300 });
    const client = await connect(url);
    expect((await client.listTools()).tools.map((listed) => listed.name)).toEqual([
      'gated',
      'check_background',
      'wait_background',
      'cancel_background',
      'list_background',
    ]);
    const started = firstValueFrom(runtime.events$.pipe(filter((event) => event.type === 'started')));
    const answer = client.callTool({ name: 'gated', arguments: { label: 'tides' } });
    await started;
    clock.increment(300);
    const acknowledged = (await answer) as { content: Array<{ text: string }> };
    const running = JSON.parse(acknowledged.content[0]?.text ?? '{}');
    // The call's id as this tenant knows it, and words a model follows to get the result.
    const [call] = (await runtime.list({ toolName: 'gated' })).calls;
    expect(call?.callId).toBe(`acme/${running.call_id}`);
    expect(running).toMatchObject({ status: 'running', tool: 'gated' });
    expect(running.message).toBe(
      `This tool is taking longer than 300 ms, so it is continuing in the background. Nothing brings its result back on its own: call wait_background with call_id "${running.call_id}" to get it, before you end your turn if you need it; check_background reports how far it got, and cancel_background stops it. Keep the call_id: it reaches this call from any later session.`,
    );
    const [, named, id] = /call (\w+) with call_id "([^"]+)"/.exec(running.message) ?? [];

    const listed = await client.callTool({ name: 'list_background', arguments: {} });
    expect(listed.structuredContent).toMatchObject({ calls: [{ call_id: id, status: 'backgrounded' }] });
    const waited = client.callTool({ name: named as string, arguments: { call_id: id } });
    gates[0]?.resolve();
    expect(await waited).toMatchObject({
      structuredContent: { call_id: id, status: 'succeeded', result: { label: 'tides' } },
    });
    // Another tenant's client does not see the call.
    const other = await connect(url, 'token-of-tenant-b-0002');
    expect(await other.callTool({ name: 'check_background', arguments: { call_id: id } })).toEqual({
      isError: true,
      content: [
        { type: 'text', text: `No call "${id}" is known: give the call_id its acknowledgement gave.` },
      ],
    });
  });

  it('serves no background-control tool when no tool may go to the background', async () => {
    const inlineOnly = demoTools.filter(
      (tool) => tool.execution.mode !== 'auto' && !tool.execution.needsApproval,
    );
    const { url } = await serve(inlineOnly);
    const client = await connect(url);
    const names = (await client.listTools()).tools.map((listed) => listed.name);
    expect(names.length).toBeGreaterThan(0);
    expect(names.filter((name) => name.endsWith('_background'))).toEqual([]);
  });

  it("sends progress for a request's progressToken, and cancels the call on notifications/cancelled", async () => {
    const { tool, gates } = gatedTool();
    const { url, runtime } = await serve([tool]);
    const client = await connect(url);
    const progress = deferred<Progress>();
    const abort = new AbortController();
    const result = client.callTool({ name: 'gated', arguments: { label: 'x' } }, undefined, {
      onprogress: progress.resolve,
      signal: abort.signal,
    });
    expect(await progress.promise).toEqual({ progress: 1, total: 2, message: 'half way' });
    expect(gates).toHaveLength(1);
    abort.abort('the user pressed stop');
    await expect(result).rejects.toThrow();
    const [call] = (await runtime.list({ toolName: 'gated' })).calls;
    const callId = call?.callId ?? '';
    for (;;) {
      const record = await runtime.get(callId);
      if (record?.status === 'cancelled') break;
      expect(record?.status).not.toMatch(/succeeded|failed/);
      await new Promise((resolve) => setImmediate(resolve));
    }
  });

  it('keeps a call whose host gave up waiting (its own timeout): it goes on, and wait_background gives its result', async () => {
    const { tool, gates } = gatedTool();
    const { url, runtime } = await serve([tool]);
    const client = await connect(url);
    const progress = deferred<Progress>();
    const abort = new AbortController();
    const result = client.callTool({ name: 'gated', arguments: { label: 'kept' } }, undefined, {
      onprogress: progress.resolve,
      signal: abort.signal,
    });
    await progress.promise;
    // What the SDKs' clients say in notifications/cancelled when their request timeout passes.
    abort.abort('McpError: MCP error -32001: Request timed out');
    await expect(result).rejects.toThrow();
    const [call] = (await runtime.list({ toolName: 'gated' })).calls;
    const callId = call?.callId ?? '';
    for (;;) {
      const record = await runtime.get(callId);
      expect(record?.status).not.toMatch(/cancelled|failed/);
      if (record?.status === 'backgrounded') break;
      await new Promise((resolve) => setImmediate(resolve));
    }
    gates[0]?.resolve();
    // The model knows the call by its tenant's id.
    const shown = callId.slice(callId.indexOf('/') + 1);
    const waited = await client.callTool({ name: 'wait_background', arguments: { call_id: shown } });
    expect(waited.structuredContent).toMatchObject({ status: 'succeeded', result: { label: 'kept' } });
  });

  it('calls a tool as a task, polls it to completion and takes its result; lists and cancels tasks', async () => {
    const { tool, gates } = gatedTool();
    const { url } = await serve([tool]);
    const client = await connect(url);
    const { task } = await client.request(
      { method: 'tools/call', params: { name: 'gated', arguments: { label: 'first' } } },
      CreateTaskResultSchema,
      { task: { ttl: 60_000 } },
    );
    expect(task).toMatchObject({ status: 'working', ttl: null, pollInterval: 1_000 });
    expect((await client.experimental.tasks.getTask(task.taskId)).status).toBe('working');
    gates[0]?.resolve();
    expect(await pollUntil(client, task.taskId, 'completed')).toMatchObject({ taskId: task.taskId });
    expect(await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema)).toMatchObject({
      content: [{ type: 'text', text: '{"label":"first"}' }],
    });

    const second = await client.request(
      { method: 'tools/call', params: { name: 'gated', arguments: { label: 'second' } } },
      CreateTaskResultSchema,
      { task: { ttl: 60_000 } },
    );
    const listed = await client.experimental.tasks.listTasks();
    expect(listed.tasks.map(({ taskId, status }) => [taskId, status])).toEqual([
      [second.task.taskId, 'working'],
      [task.taskId, 'completed'],
    ]);
    expect(await client.experimental.tasks.cancelTask(second.task.taskId)).toMatchObject({
      status: 'cancelled',
    });
    expect((await client.experimental.tasks.getTask(second.task.taskId)).status).toBe('cancelled');
    await expect(client.experimental.tasks.cancelTask(task.taskId)).rejects.toThrow(
      'Cannot cancel task in terminal status: completed',
    );
    await expect(client.experimental.tasks.getTask('no-such-task')).rejects.toThrow('Task not found');
  });

  it("keeps tasks in the store: after a restart the tenant finds them; another tenant's session does not", async () => {
    const path = join(dir, 'restart.db');
    const first = await serve([...demoTools, autoEcho], path);
    const client = await connect(first.url);
    const { task } = await client.request(
      { method: 'tools/call', params: { name: 'auto_echo', arguments: { text: 'kept' } } },
      CreateTaskResultSchema,
      { task: { ttl: 60_000 } },
    );
    await pollUntil(client, task.taskId, 'completed');
    await client.close();
    await first.app.close();
    await first.runtime.close();
    served.splice(0);

    const second = await serve([...demoTools, autoEcho], path);
    const again = await connect(second.url);
    expect((await again.experimental.tasks.getTask(task.taskId)).status).toBe('completed');
    expect(await again.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema)).toMatchObject({
      content: [{ type: 'text', text: '{"text":"kept"}' }],
    });
    const other = await connect(second.url, 'token-of-tenant-b-0002');
    await expect(other.experimental.tasks.getTask(task.taskId)).rejects.toThrow('Task not found');
    expect((await other.experimental.tasks.listTasks()).tasks).toEqual([]);
  });
});
