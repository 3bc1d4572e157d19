import { TaskState } from '@a2a-js/sdk';
import { skillMessage as messageOfSkill } from '@baton/a2a';
import { defineTool } from '@baton/contracts';
import { createRuntime, type Runtime } from '@baton/runtime';
import { deferred, SimulatedClock } from '@baton/runtime/testing';
import { eventually, nextStart } from '@baton/test-support';
import type { FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { demoTools } from '../src/demo-tools.js';
import { createServer } from '../src/server.js';
import { a2aClientOf, sendTo } from './a2a-client.js';

const A = 'token-of-tenant-a-0001';
const B = 'token-of-tenant-b-0002';
const BUDGET_MS = 300;

let runtime: Runtime;
let clock: SimulatedClock;
let app: FastifyInstance;
let base: string;
let gate: ReturnType<typeof deferred<string>>;

beforeEach(async () => {
  gate = deferred<string>();
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

const clientOf = (token: string) => a2aClientOf(base, token);
const skillMessage = (skill: string, args: unknown) =>
  messageOfSkill(skill, args, { contextId: 'context-1' });
const send = sendTo;

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

  it('keeps a bounded number of tenants’ agents: one closed for another’s still brings its task’s end', async () => {
    const small = createServer({ runtime, tokens: { [A]: 'acme', [B]: 'bolt' }, a2a: { maxAgents: 1 } });
    const smallBase = await small.listen({ host: '127.0.0.1', port: 0 });
    try {
      const acme = await a2aClientOf(smallBase, A);
      const started = nextStart(runtime);
      const answering = send(acme, skillMessage('research', { topic: 'tides' }));
      await started;
      clock.increment(BUDGET_MS);
      const task = await answering;
      expect(task.status?.state).toBe(TaskState.TASK_STATE_WORKING);
      // Bolt's agent takes the one place (its card is read first): acme's is closed.
      const echoed = await send(await a2aClientOf(smallBase, B), skillMessage('echo', { text: 'tide' }));
      expect(echoed.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);

      gate.resolve('tides: high at noon');
      const queued = () => runtime.notifications.count({ sessionId: 'acme/a2a:context-1', status: 'queued' });
      // Nothing follows acme's notifications now: the end waits in the store...
      await eventually(async () => (await queued()) === 1, 'the end is kept for acme');
      // ...until acme's next request starts its agent again, which brings it.
      const ended = await acme.getTask({ tenant: '', id: task.id });
      expect(ended.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      await eventually(async () => (await queued()) === 0, 'the end is brought once');
    } finally {
      await small.close();
    }
  });
});
