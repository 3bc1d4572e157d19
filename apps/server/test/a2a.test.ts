import { type Message, Role, TaskState } from '@a2a-js/sdk';
import { ClientFactory, DefaultAgentCardResolver, JsonRpcTransportFactory } from '@a2a-js/sdk/client';
import { defineTool } from '@baton/contracts';
import { createRuntime, type Runtime } from '@baton/runtime';
import { deferred, SimulatedClock } from '@baton/runtime/testing';
import { eventually, nextStart } from '@baton/test-support';
import type { FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { demoTools } from '../src/demo-tools.js';
import { createServer } from '../src/server.js';

const A = 'token-of-tenant-a-0001';
const B = 'token-of-tenant-b-0002';
const BUDGET_MS = 300;

let runtime: Runtime;
let clock: SimulatedClock;
let app: FastifyInstance;
let base: string;
const gate = deferred<string>();

beforeEach(async () => {
  const research = defineTool({
    name: 'research',
    description: 'Researches a topic; takes minutes',
    input: z.object({ topic: z.string() }),
    execution: { mode: 'auto' },
    execute: () => gate.promise,
  });
  clock = new SimulatedClock();
  runtime = createRuntime({ tools: [...demoTools, research], clock, inlineBudgetMs: BUDGET_MS });
  await runtime.ready;
  app = createServer({ runtime, tokens: { [A]: 'acme', [B]: 'bolt' } });
  base = await app.listen({ host: '127.0.0.1', port: 0 });
});

afterEach(async () => {
  await app.close();
  await runtime.close();
});

/** The SDK's own client, sending a tenant's token with every request (the card's too). */
async function clientOf(token: string) {
  const fetchImpl: typeof fetch = (input, init) => {
    const headers = new Headers(init?.headers);
    headers.set('authorization', `Bearer ${token}`);
    return fetch(input, { ...init, headers });
  };
  const factory = new ClientFactory({
    transports: [new JsonRpcTransportFactory({ fetchImpl })],
    cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
  });
  return factory.createFromUrl(base);
}

const skillMessage = (skill: string, args: unknown): Message => ({
  messageId: crypto.randomUUID(),
  contextId: 'context-1',
  taskId: '',
  role: Role.ROLE_USER,
  parts: [
    {
      content: { $case: 'data', value: { skill, arguments: args } },
      metadata: undefined,
      filename: '',
      mediaType: '',
    },
  ],
  metadata: undefined,
  extensions: [],
  referenceTaskIds: [],
});

async function send(client: Awaited<ReturnType<typeof clientOf>>, message: Message) {
  const result = await client.sendMessage({
    tenant: '',
    message,
    configuration: {
      acceptedOutputModes: [],
      taskPushNotificationConfig: undefined,
      returnImmediately: false,
    },
    metadata: undefined,
  });
  if (!('status' in result)) throw new Error('answered with a message, not a task');
  return result;
}

describe('the server as an A2A agent, with @a2a-js/sdk’s own client', () => {
  it('serves its card behind the tokens: the tools as skills, its endpoint where the request came', async () => {
    const anonymous = await fetch(`${base}/.well-known/agent-card.json`);
    expect(anonymous.status).toBe(401);
    const card = await (await clientOf(A)).getAgentCard();
    expect(card.skills.map((skill) => skill.id)).toEqual(expect.arrayContaining(['echo', 'research']));
    expect(card.supportedInterfaces[0]?.url).toBe(`${base}/a2a`);
  });

  it('refuses a JSON-RPC request without a token', async () => {
    const response = await fetch(`${base}/a2a`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 'x' } }),
    });
    expect(response.status).toBe(401);
  });

  it('answers a fast call as a completed task: the tenant’s call, seen by its REST API under the same id', async () => {
    const task = await send(await clientOf(A), skillMessage('echo', { text: 'tide' }));
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const rest = await fetch(`${base}/v1/calls/${task.id}`, { headers: { authorization: `Bearer ${A}` } });
    expect(rest.status).toBe(200);
    expect(await rest.json()).toMatchObject({ callId: task.id, toolName: 'echo', status: 'succeeded' });
    expect((await runtime.get(`acme/${task.id}`))?.sessionId).toBe('acme/a2a:context-1');
  });

  it('keeps a tenant’s tasks from another: GetTask of another’s task is not found', async () => {
    const task = await send(await clientOf(A), skillMessage('echo', { text: 'tide' }));
    await expect((await clientOf(B)).getTask({ tenant: '', id: task.id })).rejects.toThrow(/not found/i);
  });

  it('answers a call past its budget as a working task, and GetTask gives its end', async () => {
    const client = await clientOf(A);
    const started = nextStart(runtime);
    const answering = send(client, skillMessage('research', { topic: 'tides' }));
    await started;
    clock.increment(BUDGET_MS);
    const task = await answering;
    expect(task.status?.state).toBe(TaskState.TASK_STATE_WORKING);

    gate.resolve('tides: high at noon');
    await eventually(
      async () => (await runtime.get(`acme/${task.id}`))?.status === 'succeeded',
      'the call ends',
    );
    const ended = await client.getTask({ tenant: '', id: task.id });
    expect(ended.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
  });
});
