import { defineTool } from '@baton/contracts';
import { createRuntime, type Runtime } from '@baton/runtime';
import { deferred, memoryStore, SimulatedClock } from '@baton/runtime/testing';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import {
  createTaskSessionFromClient,
  resultFromTaskOutcome,
  toolDeclarationFromMcpTool,
} from '@modelcontextprotocol/ext-tasks/client';
import { filter, firstValueFrom } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createMcpHandler, type McpHandler, TASKS_EXTENSION } from '../src/index.js';
import { fetchVia, MODERN, rawDispatch } from './modern-client.js';

const BUDGET_MS = 300;

const opened: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of opened.splice(0).reverse()) await close();
});

/** A server whose one tool runs until the test lets it end, on a simulated clock. */
async function serve() {
  const gate = deferred<void>();
  const tool = defineTool({
    name: 'report',
    description: 'Writes a report; takes a while',
    input: z.object({ topic: z.string() }),
    execution: { mode: 'auto' },
    async execute({ topic }) {
      await gate.promise;
      return `report on ${topic}`;
    },
  });
  const clock = new SimulatedClock();
  const runtime: Runtime = createRuntime({
    tools: [tool],
    store: memoryStore(),
    clock,
    inlineBudgetMs: BUDGET_MS,
  });
  await runtime.ready;
  // Clients poll tasks/get as the server says: at once, here, so the test waits on nothing.
  const mcp: McpHandler = createMcpHandler({ runtime, pollIntervalMs: 1 });
  opened.push(async () => {
    await mcp.close();
    await runtime.close();
  });
  /** Passes the budget once the call runs: the call is promoted. */
  const promoteWhenStarted = async () => {
    const started = await firstValueFrom(runtime.events$.pipe(filter((event) => event.type === 'started')));
    clock.increment(BUDGET_MS);
    return started.callId;
  };
  return { runtime, mcp, gate, promoteWhenStarted };
}

async function connect(mcp: McpHandler, modern: boolean): Promise<Client> {
  const client = new Client(
    { name: 'requester-test', version: '1.0.0' },
    {
      capabilities: modern ? { extensions: { [TASKS_EXTENSION]: {} } } : {},
      ...(modern ? { versionNegotiation: { mode: { pin: MODERN } } } : {}),
    },
  );
  await client.connect(
    new StreamableHTTPClientTransport(new URL('http://localhost/mcp'), { fetch: fetchVia(mcp) }),
  );
  opened.push(() => client.close());
  return client;
}

describe("ext-tasks' requester over the SDK v2 client", () => {
  it('2026-07-28: a call past its budget comes back as a task, and settles with the result', async () => {
    const { mcp, gate, runtime, promoteWhenStarted } = await serve();
    const client = await connect(mcp, true);
    expect(client.getProtocolEra()).toBe('modern');
    const session = createTaskSessionFromClient(client, {
      endpointId: 'baton-test',
      rawDispatch: rawDispatch(mcp),
      v2RequestFraming: {
        protocolVersion: MODERN,
        clientInfo: { name: 'requester-test', version: '1.0.0' },
        clientCapabilities: { extensions: { [TASKS_EXTENSION]: {} } },
      },
    });
    opened.push(() => session.close());
    const promoted = promoteWhenStarted();
    const execution = await session.callTool('report', { topic: 'tides' });
    const callId = await promoted;
    expect((await runtime.get(callId))?.status).toBe('backgrounded');
    gate.resolve();
    const { outcome } = await execution.settle();
    expect(resultFromTaskOutcome(outcome)).toMatchObject({
      content: [{ type: 'text', text: 'report on tides' }],
    });
  });

  it('2025-11-25: the requester asks for a task, follows it from working to the settled result', async () => {
    const { mcp, gate, promoteWhenStarted } = await serve();
    const client = await connect(mcp, false);
    expect(client.getProtocolEra()).toBe('legacy');
    // On 2025-11-25 the requester asks for a task when the tool's declaration allows one.
    const { tools } = await client.listTools();
    const declarations = new Map(tools.map((tool) => [tool.name, toolDeclarationFromMcpTool(tool)]));
    const session = createTaskSessionFromClient(client, {
      endpointId: 'baton-test',
      tools: { currentTool: (name) => declarations.get(name) },
    });
    opened.push(() => session.close());
    void promoteWhenStarted();
    // A 2025-11-25 client chooses: this one prefers a task where the tool allows one.
    const execution = await session.callTool(
      'report',
      { topic: 'winds' },
      { task: { preference: 'prefer' } },
    );
    gate.resolve();
    const { outcome } = await execution.settle();
    expect(resultFromTaskOutcome(outcome)).toMatchObject({
      content: [{ type: 'text', text: 'report on winds' }],
    });
  });
});
