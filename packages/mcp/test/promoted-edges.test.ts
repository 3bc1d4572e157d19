/**
 * A promoted call at the edges real clients reach: a tool that declares its output, a call that
 * outlasts the clients' request timeouts, clients that reconnect or share a tenant, and sessions
 * nobody closes. The clients are the SDK v1 and OpenAI Agents, at their defaults.
 */
import { defineTool } from '@baton/contracts';
import { createRuntime, type Runtime } from '@baton/runtime';
import { deferred, memoryStore, SimulatedClock } from '@baton/runtime/testing';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { DEFAULT_REQUEST_TIMEOUT_MSEC } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { Agent, MCPServerStreamableHttp, Runner } from '@openai/agents';
import { filter } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type ClosedSession, TASKS_EXTENSION } from '../src/index.js';
import { modernClient, TENANTS } from './modern-client.js';
import { initializeOver, type OverHttp, serveOverHttp } from './over-http.js';
import { type Move, ScriptedModel } from './scripted-agent-model.js';

const BUDGET_MS = 300;
const TIDES = { high: '12:40', low: '18:52' };
/** The call the long-wait tests follow: three minutes on the runtime's clock. */
const THREE_MINUTES_MS = 180_000;

const forecastInput = z.object({ port: z.string() });
const forecastOutput = z.object({ high: z.string(), low: z.string() });

const served: OverHttp[] = [];
const tickers: Array<ReturnType<typeof setInterval>> = [];
afterEach(async () => {
  for (const ticker of tickers.splice(0)) clearInterval(ticker);
  for (const each of served.splice(0)) await each.close();
});

interface Forecasting {
  runtime: Runtime;
  clock: SimulatedClock;
  http: OverHttp;
  /** Ends the forecast (the gated tool). */
  finish(): void;
}

/**
 * A runtime with `forecast`, a tool that declares its output and may go to the background, served
 * over HTTP. `gated`: it ends when the test says, and its budget passes as it starts; otherwise it
 * takes three minutes on a clock that runs about 500 times faster than the wall's.
 */
async function forecasting(
  kind: 'gated' | 'three minutes',
  options: Parameters<typeof serveOverHttp>[1] = {},
): Promise<Forecasting> {
  const clock = new SimulatedClock();
  const gate = deferred<z.infer<typeof forecastOutput>>();
  const forecast = defineTool({
    name: 'forecast',
    description: 'Forecasts the tides of a port',
    input: forecastInput,
    output: forecastOutput,
    execution: { mode: 'auto' },
    execute: () =>
      kind === 'gated'
        ? gate.promise
        : new Promise<z.infer<typeof forecastOutput>>((resolve) => {
            clock.setTimeout(() => resolve(TIDES), THREE_MINUTES_MS);
          }),
  });
  const runtime = createRuntime({
    tools: [forecast],
    store: memoryStore(),
    clock,
    inlineBudgetMs: BUDGET_MS,
  });
  await runtime.ready;
  if (kind === 'gated') {
    runtime.events$
      .pipe(filter((event) => event.type === 'started' && event.toolName === 'forecast'))
      .subscribe(() => clock.increment(BUDGET_MS));
  } else {
    tickers.push(setInterval(() => clock.increment(1_000), 2));
  }
  const http = await serveOverHttp(runtime, options);
  served.push(http);
  return { runtime, clock, http, finish: () => gate.resolve(TIDES) };
}

async function sdkClient(http: OverHttp, capabilities: Record<string, object> = {}): Promise<Client> {
  const client = new Client({ name: 'edges', version: '1.0.0' }, { capabilities });
  await client.connect(new StreamableHTTPClientTransport(new URL(http.url)));
  http.onClose(() => client.close());
  return client;
}

async function forecastCalls(runtime: Runtime) {
  return (await runtime.list({ toolName: 'forecast' })).calls.map(({ status }) => status);
}

const textOf = (result: unknown) => (result as { content: Array<{ text: string }> }).content[0]?.text ?? '';

/** The call id an acknowledgement or a still-running answer names, with the tool it says to call. */
function named(text: string): { tool: string; callId: string } | undefined {
  const found = /call (\w+)(?: again)? with call_id\W+([0-9a-f-]{36})/.exec(text);
  return found ? { tool: found[1] as string, callId: found[2] as string } : undefined;
}

/**
 * What a model that follows what it is shown does: it asks for the forecast, calls the tool the
 * words name with the id they give (asking for a two-minute wait), and says the result once it
 * has one.
 */
function following(shown: string): Move {
  if (shown === '') return { call: 'forecast', args: { port: 'Brest' } };
  const next = named(shown.replaceAll('\\"', '"'));
  if (next) return { call: next.tool, args: { call_id: next.callId, timeout_ms: 120_000 } };
  return { say: shown.includes(TIDES.high) ? `High tide ${TIDES.high}` : '?' };
}

async function runAgent(http: OverHttp, maxTurns: number) {
  const server = new MCPServerStreamableHttp({ url: http.url, name: 'baton' });
  await server.connect();
  http.onClose(() => server.close());
  const model = new ScriptedModel(following);
  const agent = new Agent({ name: 'tides', model, mcpServers: [server] });
  const result = await new Runner({ tracingDisabled: true }).run(agent, 'When is high tide in Brest?', {
    maxTurns,
  });
  return { model, result };
}

describe('a promoted tool that declares its output, to clients that take no tasks', () => {
  it('SDK v1 callTool: the acknowledgement is accepted, then wait_background gives the output in its shape; one call', async () => {
    const { runtime, http, finish } = await forecasting('gated');
    const client = await sdkClient(http);
    const { tools } = await client.listTools();
    const listed = tools.find((tool) => tool.name === 'forecast');
    // The schema is told in words: a client holding it would refuse the acknowledgement.
    expect(listed?.outputSchema).toBeUndefined();
    expect(listed?.description).toContain('Output (JSON Schema): {');
    expect(listed?.description).toContain('"high":{"type":"string"}');

    const acknowledged = await client.callTool({ name: 'forecast', arguments: { port: 'Brest' } });
    expect(acknowledged.isError).toBeUndefined();
    const { callId } = named(textOf(acknowledged)) ?? { callId: '' };
    finish();
    const waited = await client.callTool({ name: 'wait_background', arguments: { call_id: callId } });
    expect(waited.structuredContent).toMatchObject({ call_id: callId, status: 'succeeded', result: TIDES });
    expect(forecastOutput.parse((waited.structuredContent as { result: unknown }).result)).toEqual(TIDES);
    expect(await forecastCalls(runtime)).toEqual(['succeeded']);
  });

  it('OpenAI Agents: the model is shown the acknowledgement, not an error, then the output; one call', async () => {
    const { runtime, http, finish } = await forecasting('gated');
    runtime.events$.pipe(filter((event) => event.type === 'backgrounded')).subscribe(() => finish());
    const { model, result } = await runAgent(http, 5);
    expect(model.called).toEqual(['forecast', 'wait_background']);
    expect(model.shown[0]).toContain('continuing in the background');
    expect(model.shown.join('\n')).not.toContain('An error occurred');
    expect(result.finalOutput).toBe(`High tide ${TIDES.high}`);
    expect(await forecastCalls(runtime)).toEqual(['succeeded']);
  });

  it('keeps the schema for clients that take tasks: 2025-11-25 that declared them, 2026-07-28 with the extension', async () => {
    const { http } = await forecasting('gated');
    const declaring = await sdkClient(http, { tasks: { requests: { tools: { call: {} } } } });
    const { tools } = await declaring.listTools();
    expect(tools.find((tool) => tool.name === 'forecast')?.outputSchema).toMatchObject({
      properties: { high: { type: 'string' }, low: { type: 'string' } },
    });
    const schemaFor = async (capabilities: Record<string, unknown>) => {
      const answer = await modernClient(http.mcp, {}, capabilities)('tools/list', {});
      const listed =
        answer.kind === 'result' ? (answer.result as { tools: Array<{ name: string }> }).tools : [];
      return (listed.find((tool) => tool.name === 'forecast') as { outputSchema?: unknown }).outputSchema;
    };
    expect(await schemaFor({ extensions: { [TASKS_EXTENSION]: {} } })).toBeDefined();
    expect(await schemaFor({})).toBeUndefined();
  });
});

describe("a wait that ends before the client's own timeout", () => {
  it('SDK v1 at its default timeout follows a three-minute call: each wait ends within 45 s, says to wait again', async () => {
    const { runtime, http } = await forecasting('three minutes');
    const client = await sdkClient(http);
    const acknowledged = await client.callTool({ name: 'forecast', arguments: { port: 'Brest' } });
    const { callId } = named(textOf(acknowledged)) ?? { callId: '' };
    const answers: Array<Record<string, unknown>> = [];
    for (let round = 0; round < 10; round++) {
      const waited = await client.callTool({
        name: 'wait_background',
        arguments: { call_id: callId, timeout_ms: 120_000 },
      });
      answers.push(waited.structuredContent as Record<string, unknown>);
      if (answers.at(-1)?.status === 'succeeded') break;
    }
    const stillRunning = answers.slice(0, -1);
    expect(stillRunning.length).toBeGreaterThanOrEqual(3);
    for (const answer of stillRunning) {
      expect(answer.message).toBe(
        `Still running after 45000 ms: call wait_background again with call_id "${callId}" to keep waiting, or continue the conversation and check later.`,
      );
    }
    expect(45_000).toBeLessThan(DEFAULT_REQUEST_TIMEOUT_MSEC);
    expect(answers.at(-1)).toMatchObject({ status: 'succeeded', result: TIDES });
    expect(await forecastCalls(runtime)).toEqual(['succeeded']);
  });

  it('OpenAI Agents at its default timeout follows a three-minute call to its output', async () => {
    const { runtime, http } = await forecasting('three minutes');
    const { model, result } = await runAgent(http, 12);
    expect(model.called[0]).toBe('forecast');
    expect(model.called.slice(1).every((name) => name === 'wait_background')).toBe(true);
    expect(model.called.length).toBeGreaterThanOrEqual(4);
    expect(model.shown.join('\n')).not.toMatch(/error|timed out/i);
    expect(result.finalOutput).toBe(`High tide ${TIDES.high}`);
    expect(await forecastCalls(runtime)).toEqual(['succeeded']);
  });

  it('a request that takes progress is sent a sign of life every 10 s, and waits as long as it asked', async () => {
    const { http } = await forecasting('three minutes');
    const client = await sdkClient(http);
    const acknowledged = await client.callTool({ name: 'forecast', arguments: { port: 'Brest' } });
    const { callId } = named(textOf(acknowledged)) ?? { callId: '' };
    const beats: string[] = [];
    const waited = await client.callTool(
      { name: 'wait_background', arguments: { call_id: callId, timeout_ms: 60_000 } },
      undefined,
      { onprogress: (progress) => beats.push(progress.message ?? ''), resetTimeoutOnProgress: true },
    );
    expect(beats).toEqual([10, 20, 30, 40, 50].map((seconds) => `still running after ${seconds * 1_000} ms`));
    expect((waited.structuredContent as { message: string }).message).toMatch(
      /^Still running after 60000 ms/,
    );
  });
});

describe('who may reach a call: its id, from any session of its tenant', () => {
  it('2025-11-25: a client that reconnects checks, waits and cancels by the id; its new session lists none', async () => {
    const { runtime, http } = await forecasting('gated');
    const first = await sdkClient(http);
    const { callId } = named(
      textOf(await first.callTool({ name: 'forecast', arguments: { port: 'Brest' } })),
    ) ?? {
      callId: '',
    };
    await first.close();
    const again = await sdkClient(http);
    const check = await again.callTool({ name: 'check_background', arguments: { call_id: callId } });
    expect(check.structuredContent).toMatchObject({ call_id: callId, status: 'backgrounded' });
    const listed = await again.callTool({ name: 'list_background', arguments: {} });
    expect(listed.structuredContent).toEqual({ calls: [] });
    const cancelled = await again.callTool({ name: 'cancel_background', arguments: { call_id: callId } });
    expect(cancelled.structuredContent).toEqual({ call_id: callId, status: 'cancelled' });
    expect(await forecastCalls(runtime)).toEqual(['cancelled']);
  });

  it("2026-07-28: a stateless client cannot list another's calls; the id reaches them, for its tenant only", async () => {
    const { http, finish } = await forecasting('gated', {
      authenticate: (request) => TENANTS[request.headers.get('authorization') ?? ''],
    });
    const a = modernClient(http.mcp, { authorization: 'Bearer token-a' }, {});
    const b = modernClient(http.mcp, { authorization: 'Bearer token-a' }, {});
    const otherTenant = modernClient(http.mcp, { authorization: 'Bearer token-b' }, {});
    const resultOf = async (answer: Promise<{ kind: string; result?: unknown }>) =>
      (await answer).result as {
        isError?: boolean;
        content: Array<{ text: string }>;
        structuredContent?: unknown;
      };
    const acknowledged = await resultOf(a('tools/call', { name: 'forecast', arguments: { port: 'Brest' } }));
    const { callId } = named(textOf(acknowledged)) ?? { callId: '' };
    expect(callId).not.toBe('');

    const listedTools = (await b('tools/list', {})).result as unknown as { tools: Array<{ name: string }> };
    expect(listedTools.tools.map((tool) => tool.name)).toEqual([
      'forecast',
      'check_background',
      'wait_background',
      'cancel_background',
    ]);
    const listing = await resultOf(b('tools/call', { name: 'list_background', arguments: {} }));
    expect(listing).toMatchObject({ isError: true });
    expect(textOf(listing)).toBe(
      'list_background lists the calls of a session, and this client has none (it is stateless): use the call_id each acknowledgement gave.',
    );
    const unknown = await resultOf(
      otherTenant('tools/call', { name: 'cancel_background', arguments: { call_id: callId } }),
    );
    expect(textOf(unknown)).toBe(`No call "${callId}" is known: give the call_id its acknowledgement gave.`);

    finish();
    const waited = await resultOf(
      a('tools/call', { name: 'wait_background', arguments: { call_id: callId } }),
    );
    expect(waited.structuredContent).toMatchObject({ call_id: callId, status: 'succeeded', result: TIDES });
  });
});

describe('idle sessions at the cap', () => {
  it('a newcomer at a cap of 3 closes the least recently used of 3 idle sessions, and it is logged', async () => {
    const closed: ClosedSession[] = [];
    const { http } = await forecasting('gated', {
      sessions: { perTenant: 3 },
      onIdleSessionClosed: (session) => closed.push(session),
    });
    // Clients that go away without ending their session (no DELETE).
    const gone: string[] = [];
    for (let each = 0; each < 3; each++) {
      const client = await sdkClient(http);
      gone.push((client.transport as StreamableHTTPClientTransport).sessionId ?? '');
      await client.close();
    }
    expect(http.mcp.sessionCount).toBe(3);
    const newcomer = await sdkClient(http);
    expect((await newcomer.listTools()).tools.length).toBeGreaterThan(0);
    expect(closed.map((session) => session.sessionId)).toEqual([gone[0]]);
    expect(http.mcp.sessionCount).toBe(3);
  });

  it('sessions whose calls have not ended are busy: a newcomer gets 429 until one ends', async () => {
    const { runtime, http, finish } = await forecasting('gated', { sessions: { perTenant: 3 } });
    for (let each = 0; each < 3; each++) {
      const client = await sdkClient(http);
      await client.callTool({ name: 'forecast', arguments: { port: `Port ${each}` } });
      await client.close();
    }
    expect(await forecastCalls(runtime)).toEqual(['backgrounded', 'backgrounded', 'backgrounded']);
    const refused = await initializeOver(http.url, 'late');
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toMatch(
      /^too many open MCP sessions, all busy/,
    );
    const ended = runtime.events$.pipe(filter((event) => event.type === 'succeeded'));
    let endedCount = 0;
    const counting = ended.subscribe(() => endedCount++);
    finish();
    await expect.poll(() => endedCount).toBe(3);
    counting.unsubscribe();
    const newcomer = await sdkClient(http);
    expect((await newcomer.listTools()).tools.length).toBeGreaterThan(0);
  });
});
