/**
 * The MCP endpoint as a consumer of a call's end, through a small follower per kind of client: a
 * plain client with the background tools (2025-11-25), a task client that follows with
 * tasks/result, one that polls tasks/get and asks tasks/result once the task ended (as
 * `@modelcontextprotocol/ext-tasks` does), and a 2026-07-28 task client. Whichever way it follows,
 * it is given the end once, and nothing of the call is left for another consumer to give again:
 * past the budget, with an update the end replaces, and with an approval approved or declined.
 */
import { defineTool } from '@baton/contracts';
import { createRuntime, type Runtime } from '@baton/runtime';
import { deferred, memoryStore, SimulatedClock } from '@baton/runtime/testing';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  ElicitRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { filter, firstValueFrom } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createMcpHandler, type McpHandler, TASKS_EXTENSION } from '../src/index.js';
import { modernClient, TENANTS } from './modern-client.js';

const BUDGET_MS = 300;
const SESSION_PREFIX = 'acme/';

/** How a person answers the approvals the client is asked for. */
type Answer = 'accept' | 'decline';

/** The endpoint over a runtime whose `research` runs until its topic ends, and whose `deploy` asks first. */
function served() {
  const gates = new Map<string, ReturnType<typeof deferred<void>>>();
  const gateOf = (topic: string) => {
    let gate = gates.get(topic);
    if (!gate) {
      gate = deferred<void>();
      gates.set(topic, gate);
    }
    return gate;
  };
  const research = defineTool({
    name: 'research',
    description: 'Researches a topic, and says how far it got',
    input: z.object({ topic: z.string() }),
    execution: { mode: 'auto' },
    async execute({ topic }, ctx) {
      ctx.update(`${topic}: half way`);
      await gateOf(topic).promise;
      return `${topic}: found`;
    },
  });
  const deploy = defineTool({
    name: 'deploy',
    description: 'Deploys, once a person approves',
    input: z.object({ target: z.string() }),
    execution: { mode: 'auto', needsApproval: true },
    execute: async ({ target }) => `deployed ${target}`,
  });
  const clock = new SimulatedClock();
  const runtime = createRuntime({
    tools: [research, deploy],
    store: memoryStore(),
    clock,
    inlineBudgetMs: BUDGET_MS,
  });
  const mcp = createMcpHandler({
    runtime,
    authenticate: (request) => TENANTS[request.headers.get('authorization') ?? ''],
  });
  return { runtime, mcp, clock, end: (topic: string) => gateOf(topic).resolve() };
}

type Served = ReturnType<typeof served>;

/** A kind of MCP client, following a call its way. */
interface Follower {
  /** Makes the call; resolves once the client was answered, with what the model was told and the id to follow. */
  call(name: string, args: Record<string, unknown>): Promise<{ told: string; id: string }>;
  /** Follows the call to its end; the end's text. */
  end(id: string): Promise<string>;
}

const textOf = (result: unknown) =>
  ((result as { content?: Array<{ text?: string }> }).content ?? [])
    .map((block) => block.text ?? '')
    .join('');

const closing: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
});

/** An SDK client on 2025-11-25, with elicitation answered `answer`. */
async function legacyClient({ mcp }: Served, answer: () => Answer): Promise<Client> {
  const client = new Client({ name: 'host', version: '1.0.0' }, { capabilities: { elicitation: {} } });
  client.setRequestHandler(ElicitRequestSchema, async () =>
    answer() === 'accept'
      ? { action: 'accept', content: {} }
      : { action: 'decline', content: { reason: 'not now' } },
  );
  await client.connect(
    new StreamableHTTPClientTransport(new URL('http://localhost/mcp'), {
      requestInit: { headers: { authorization: 'Bearer token-a', host: 'localhost' } },
      fetch: (url, init) => mcp.fetch(new Request(url, init)),
    }),
  );
  closing.push(() => client.close());
  return client;
}

/** A 2025-11-25 task for the call: the model is told nothing yet. */
async function taskOf(client: Client, name: string, args: Record<string, unknown>) {
  const { task } = await client.request(
    { method: 'tools/call', params: { name, arguments: args } },
    CreateTaskResultSchema,
    { task: { ttl: 60_000 } },
  );
  return { told: '', id: task.taskId };
}

const FOLLOWERS: Record<string, (served: Served, answer: () => Answer) => Promise<Follower>> = {
  'background tools (2025-11-25, no tasks)': async (entry, answer) => {
    const client = await legacyClient(entry, answer);
    return {
      async call(name, args) {
        const result = await client.callTool({ name, arguments: args });
        const meta = (result._meta as Record<string, { callId?: string }> | undefined)?.['baton/call'];
        return { told: textOf(result), id: meta?.callId ?? '' };
      },
      end: async (id) =>
        textOf(await client.callTool({ name: 'wait_background', arguments: { call_id: id } })),
    };
  },
  'tasks/result (2025-11-25)': async (entry, answer) => {
    const client = await legacyClient(entry, answer);
    return {
      call: (name, args) => taskOf(client, name, args),
      end: async (id) => textOf(await client.experimental.tasks.getTaskResult(id, CallToolResultSchema)),
    };
  },
  'tasks/get, then tasks/result once ended (2025-11-25, as ext-tasks)': async (entry, answer) => {
    const client = await legacyClient(entry, answer);
    return {
      call: (name, args) => taskOf(client, name, args),
      async end(id) {
        await expect
          .poll(async () => (await client.experimental.tasks.getTask(id)).status)
          .toMatch(/completed|failed|cancelled/);
        return textOf(await client.experimental.tasks.getTaskResult(id, CallToolResultSchema));
      },
    };
  },
  'background tools (2026-07-28, no tasks)': async ({ mcp }) => {
    const send = modernClient(mcp, { authorization: 'Bearer token-a' }, {});
    const call = async (name: string, args: Record<string, unknown>) => {
      const reply = await send('tools/call', { name, arguments: args });
      if (reply.kind === 'error') throw new Error(reply.error.message);
      return reply.result as Record<string, unknown>;
    };
    return {
      async call(name, args) {
        const result = await call(name, args);
        const meta = (result._meta as Record<string, { callId?: string }> | undefined)?.['baton/call'];
        return { told: textOf(result), id: meta?.callId ?? '' };
      },
      end: async (id) => textOf(await call('wait_background', { call_id: id })),
    };
  },
  'tasks/get (2026-07-28)': async ({ mcp }: { mcp: McpHandler }, answer) => {
    const send = modernClient(
      mcp,
      { authorization: 'Bearer token-a' },
      { elicitation: {}, extensions: { [TASKS_EXTENSION]: {} } },
    );
    const request = async (method: string, params: Record<string, unknown>) => {
      const reply = await send(method, params);
      if (reply.kind === 'error') throw new Error(reply.error.message);
      return reply.result as Record<string, unknown> & { taskId: string; status: string };
    };
    return {
      async call(name, args) {
        const created = await request('tools/call', { name, arguments: args });
        // A call that ended within its budget is answered inline, not as a task.
        return { told: textOf(created), id: created.taskId ?? '' };
      },
      async end(id) {
        let task = await request('tasks/get', { taskId: id });
        for (let polls = 0; task.status !== 'completed' && task.status !== 'failed'; polls++) {
          if (polls > 200) throw new Error(`task ${id} stays ${task.status}`);
          if (task.status === 'input_required') {
            const action = answer();
            await request('tasks/update', {
              taskId: id,
              inputResponses: {
                approval: action === 'accept' ? { action } : { action, content: { reason: 'not now' } },
              },
            });
          }
          task = await request('tasks/get', { taskId: id });
        }
        return textOf(task.result);
      },
    };
  },
};

/** The kind of client that is never asked for an approval. */
const NOT_ASKED = 'background tools (2026-07-28, no tasks)';

const queued = (runtime: Runtime) =>
  runtime.notifications.count({ sessionPrefix: SESSION_PREFIX, status: 'queued' });

/** Moves the clock past the budget once the call `callId` (of any id) has started. */
const promotedAtStart = (entry: Served) =>
  firstValueFrom(entry.runtime.events$.pipe(filter((event) => event.type === 'started'))).then(() =>
    entry.clock.increment(BUDGET_MS),
  );

describe.each(Object.entries(FOLLOWERS))(
  'the MCP endpoint gives a call’s end once: %s',
  (kind, followerOf) => {
    const setUp = async (answer: Answer = 'accept') => {
      const entry = served();
      await entry.runtime.ready;
      closing.push(async () => {
        await entry.mcp.close();
        await entry.runtime.close();
      });
      return { entry, follower: await followerOf(entry, () => answer) };
    };

    it('within its budget: the end in the reply (or the task), nothing left queued', async () => {
      const { entry, follower } = await setUp();
      entry.end('moons');
      const { told, id } = await follower.call('research', { topic: 'moons' });
      expect(id === '' ? told : await follower.end(id)).toContain('moons: found');
      expect(await queued(entry.runtime)).toBe(0);
    });

    it('past its budget: the end once, its update replaced, nothing left queued', async () => {
      const { entry, follower } = await setUp();
      const promoted = promotedAtStart(entry);
      const { id } = await follower.call('research', { topic: 'tides' });
      await promoted;
      entry.end('tides');
      expect(await follower.end(id)).toContain('tides: found');
      // The update and the end were the client's: no other consumer of the session is given them.
      expect(await queued(entry.runtime)).toBe(0);
      // Asked again, the same end; still nothing to give.
      expect(await follower.end(id)).toContain('tides: found');
      expect(await queued(entry.runtime)).toBe(0);
    });

    // A 2026-07-28 client without tasks is never asked for an approval (no request of its waits
    // for one): the call waits for the server's API or the inspector, as handler.test.ts shows.
    for (const answer of kind === NOT_ASKED ? [] : (['accept', 'decline'] as const)) {
      it(`an approval ${answer === 'accept' ? 'approved' : 'declined'}: its end once, nothing left queued`, async () => {
        const { entry, follower } = await setUp(answer);
        const { told, id } = await follower.call('deploy', { target: 'prod' });
        // A plain client is asked on its tools/call, and told the end there.
        const ended = id === '' ? told : await follower.end(id);
        expect(ended).toContain(answer === 'accept' ? 'deployed prod' : 'not now');
        expect(await queued(entry.runtime)).toBe(0);
        const record = (await entry.runtime.list({ sessionPrefix: SESSION_PREFIX })).calls[0];
        expect(record?.approval).toBe(answer === 'accept' ? 'approved' : 'rejected');
      });
    }
  },
);
