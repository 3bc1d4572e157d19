import { readFileSync } from 'node:fs';
import { type AnyTool, defineTool } from '@baton/contracts';
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
import { uuidv7 } from 'uuidv7';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createMcpHandler, type McpHandler, type McpHandlerOptions, type McpScope } from '../src/index.js';

const BUDGET_MS = 300;

/** An auto tool that runs until the test lets it end. */
function gatedTool() {
  const gate = deferred<void>();
  const tool = defineTool({
    name: 'gated',
    description: 'Waits for the test',
    input: z.object({}),
    execution: { mode: 'auto' },
    async execute() {
      await gate.promise;
      return 'finished';
    },
  });
  return { tool, gate };
}

const inlineTool = defineTool({
  name: 'quick',
  description: 'Answers at once; never a task',
  input: z.object({}),
  execution: { mode: 'inline' },
  execute: async () => 'quick answer',
});

const backgroundTool = defineTool({
  name: 'batch',
  description: 'Only runs as a task',
  input: z.object({}),
  execution: { mode: 'background' },
  execute: async () => 'batch done',
});

const tenant: McpScope = {
  tenant: 'acme',
  inside: (id) => `acme/${id}`,
  outside: (id) => id.replace(/^acme\//, ''),
  newCallId: () => `acme/${crypto.randomUUID()}`,
};

const other: McpScope = { ...tenant, tenant: 'bolt', inside: (id) => `bolt/${id}` };
const TENANTS: Record<string, McpScope> = { 'Bearer token-a': tenant, 'Bearer token-b': other };

const opened: Array<{ runtime: Runtime; mcp: McpHandler; clients: Client[] }> = [];
afterEach(async () => {
  for (const { runtime, mcp, clients } of opened.splice(0)) {
    await Promise.all(clients.map((client) => client.close()));
    await mcp.close();
    await runtime.close();
  }
});

async function serve(
  tools: AnyTool[] = [inlineTool, backgroundTool],
  options: Omit<McpHandlerOptions, 'runtime'> = {},
) {
  const clock = new SimulatedClock();
  const runtime = createRuntime({ tools, store: memoryStore(), clock, inlineBudgetMs: BUDGET_MS });
  await runtime.ready;
  const mcp = createMcpHandler({
    runtime,
    authenticate: (request) => TENANTS[request.headers.get('authorization') ?? ''],
    ...options,
  });
  const entry = { runtime, mcp, clients: [] as Client[], clock };
  opened.push(entry);
  return entry;
}

/** An SDK (v1) client on 2025-11-25, whose requests go straight to the handler. */
async function connect(
  entry: Awaited<ReturnType<typeof serve>>,
  capabilities: Record<string, object> = {},
): Promise<Client> {
  const client = new Client({ name: 'test', version: '1.0.0' }, { capabilities });
  const transport = new StreamableHTTPClientTransport(new URL('http://localhost/mcp'), {
    requestInit: { headers: { authorization: 'Bearer token-a', host: 'localhost' } },
    fetch: (url, init) => entry.mcp.fetch(new Request(url, init)),
  });
  await client.connect(transport);
  entry.clients.push(client);
  return client;
}

/** The text of a tool result's first block. */
const textOf = (result: unknown) => (result as { content: Array<{ text: string }> }).content[0]?.text ?? '';

function post(mcp: McpHandler, body: string, headers: Record<string, string> = {}) {
  return mcp.fetch(
    new Request('http://localhost/mcp', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: 'Bearer token-a',
        host: 'localhost',
        ...headers,
      },
      body,
    }),
  );
}

describe('the MCP handler at its edge', () => {
  it("tells a client the package's version as its own", async () => {
    const client = await connect(await serve());
    const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
      version: string;
    };
    expect(client.getServerVersion()).toEqual(expect.objectContaining({ name: 'baton', version }));
  });

  it('lists only the tools the caller’s scope allows, and answers a call of another 403 with the host’s step-up challenge', async () => {
    const challenge = 'Bearer error="insufficient_scope", scope="batch:run"';
    const scoped: McpScope = {
      ...tenant,
      caller: { via: 'oauth', tenant: 'acme', scopes: [] },
      challenge: (scope) => `Bearer error="insufficient_scope", scope="${scope}"`,
    };
    const entry = await serve(undefined, { authenticate: () => scoped });
    entry.runtime.access.configure({ toolScopes: { batch: 'batch:run' } });
    const client = await connect(entry);
    expect((await client.listTools()).tools.map((tool) => tool.name)).not.toContain('batch');
    const call = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'batch', arguments: {} },
    });
    const refused = await post(entry.mcp, call, { 'mcp-protocol-version': '2026-07-28' });
    expect(refused.status).toBe(403);
    expect(refused.headers.get('www-authenticate')).toBe(challenge);
    expect((await entry.runtime.list({})).calls).toEqual([]);
  });

  it('answers malformed JSON with -32700, a missing token with 401 and WWW-Authenticate, a foreign Host with 403', async () => {
    const { mcp } = await serve();
    const malformed = await post(mcp, '{"jsonrpc": "2.0", "method": ');
    expect(malformed.status).toBe(400);
    expect(await malformed.json()).toMatchObject({ error: { code: -32700 }, id: null });

    const anonymous = await post(mcp, '{}', { authorization: '' });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toMatch(/^Bearer /);
    expect(await anonymous.json()).toMatchObject({
      error: { message: expect.stringMatching(/bearer token/) },
    });

    const rebound = await mcp.fetch(
      new Request('http://evil.example.com/mcp', {
        method: 'POST',
        headers: {
          host: 'evil.example.com',
          origin: 'http://evil.example.com',
          'content-type': 'application/json',
        },
        body: '{}',
      }),
    );
    expect(rebound.status).toBe(403);
    expect(mcp.sessionCount).toBe(0);
  });
});

describe('what the endpoint says it serves', () => {
  it('lists in server/discover every revision it serves, and gives each initialize the capabilities of its revision only', async () => {
    const entry = await serve();
    const discover = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'server/discover',
      params: {
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientCapabilities': {},
        },
      },
    });
    const [discovered] = await rpcAnswers(
      await post(entry.mcp, discover, {
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'server/discover',
      }),
    );
    const { supportedVersions } = (discovered?.result ?? {}) as { supportedVersions: string[] };
    expect(supportedVersions[0]).toBe('2026-07-28');
    expect(supportedVersions).toEqual(expect.arrayContaining(['2025-11-25', '2025-06-18', '2025-03-26']));

    const initialize = (protocolVersion: string) =>
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion, capabilities: {}, clientInfo: { name: 't', version: '1' } },
      });
    const capabilitiesOf = async (protocolVersion: string) => {
      const [answer] = await rpcAnswers(await post(entry.mcp, initialize(protocolVersion)));
      const result = answer?.result as { protocolVersion: string; capabilities: Record<string, unknown> };
      expect(result.protocolVersion).toBe(protocolVersion);
      return result.capabilities;
    };
    // Tasks came with 2025-11-25: a client of an earlier revision is not offered them.
    expect(await capabilitiesOf('2025-11-25')).toHaveProperty('tasks');
    expect(await capabilitiesOf('2025-06-18')).not.toHaveProperty('tasks');
    expect(await capabilitiesOf('2025-06-18')).toHaveProperty('tools');
  });

  it('2025-11-25: lists to a client that declared tasks no control tool that gives a result a second way', async () => {
    const entry = await serve();
    const namesFor = async (capabilities: object) => {
      const opened = await post(
        entry.mcp,
        JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: '2025-11-25', capabilities, clientInfo: { name: 't', version: '1' } },
        }),
      );
      const session = {
        'mcp-session-id': opened.headers.get('mcp-session-id') ?? '',
        'mcp-protocol-version': '2025-11-25',
      };
      const list = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} });
      const [answer] = await rpcAnswers(await post(entry.mcp, list, session));
      return ((answer?.result ?? { tools: [] }) as { tools: Array<{ name: string }> }).tools.map(
        (tool) => tool.name,
      );
    };
    const withoutTasks = await namesFor({});
    expect(withoutTasks).toContain('wait_background');
    const withTasks = await namesFor({ tasks: { requests: { tools: { call: {} } } } });
    expect(withTasks).toEqual(
      withoutTasks.filter(
        (name) => !['check_background', 'wait_background', 'cancel_background'].includes(name),
      ),
    );
    expect(withTasks).toContain('list_background');
  });
});

describe('sessions on 2025-11-25', () => {
  it("belong to their tenant: another tenant's token cannot use one", async () => {
    const entry = await serve();
    const initialize = await post(
      entry.mcp,
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
      }),
    );
    const session = initialize.headers.get('mcp-session-id') ?? '';
    expect(session).not.toBe('');
    const list = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} });
    const headers = { 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' };
    expect((await post(entry.mcp, list, { ...headers, authorization: 'Bearer token-b' })).status).toBe(404);
    expect((await post(entry.mcp, list, headers)).status).toBe(200);
  });

  it('go on after a restart: a session an earlier process opened is taken up under its id, and an id none issued is still unknown', async () => {
    const first = await serve();
    const initialize = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    });
    const opened = await post(first.mcp, initialize);
    const session = opened.headers.get('mcp-session-id') ?? '';
    // Issued in a millisecond before the next process starts.
    const issued = Number.parseInt(session.replaceAll('-', '').slice(0, 12), 16);
    while (Date.now() <= issued) await new Promise((resolve) => setImmediate(resolve));
    // Baton restarts: a new endpoint over the same calls, which knows no session.
    const restarted = createMcpHandler({
      runtime: first.runtime,
      authenticate: (request) => TENANTS[request.headers.get('authorization') ?? ''],
    });
    try {
      const list = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} });
      const headers = (id: string) => ({ 'mcp-session-id': id, 'mcp-protocol-version': '2025-06-18' });
      const listed = await post(restarted, list, headers(session));
      expect(listed.status).toBe(200);
      const [answer] = await rpcAnswers(listed);
      expect((answer?.result as { tools: unknown[] } | undefined)?.tools.length).toBeGreaterThan(0);
      // Another tenant cannot take it up: the session is the first tenant's now.
      expect(
        (await post(restarted, list, { ...headers(session), authorization: 'Bearer token-b' })).status,
      ).toBe(404);
      // An id no earlier process issued: one of this process's time, and one not of Baton's kind.
      expect((await post(restarted, list, headers(uuidv7()))).status).toBe(404);
      expect((await post(restarted, list, headers(crypto.randomUUID()))).status).toBe(404);
    } finally {
      await restarted.close();
    }
  });

  it('decide each request by its own token: step-up works in a session, a narrow token in a wide one is refused, a batch is checked call by call', async () => {
    const scoped = (scopes: string[]): McpScope => ({
      ...tenant,
      caller: { via: 'oauth', tenant: 'acme', scopes },
      challenge: (scope) => `Bearer error="insufficient_scope", scope="${scope}"`,
    });
    const callers: Record<string, McpScope> = {
      'Bearer narrow': scoped([]),
      'Bearer wide': scoped(['quick:run']),
    };
    const entry = await serve(undefined, {
      authenticate: (request) => callers[request.headers.get('authorization') ?? ''],
    });
    let quota = 3;
    entry.runtime.access.configure({
      toolScopes: { quick: 'quick:run' },
      quota: () => (quota-- > 0 ? undefined : { message: 'spent', retryAfterSeconds: 7 }),
    });
    const initialize = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    });
    const opened = await post(entry.mcp, initialize, { authorization: 'Bearer narrow' });
    const session = {
      'mcp-session-id': opened.headers.get('mcp-session-id') ?? '',
      'mcp-protocol-version': '2025-11-25',
    };
    const call = (id: number) => ({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name: 'quick', arguments: {} },
    });
    const list = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} });
    const listed = async (authorization: string) => {
      const [answer] = await rpcAnswers(await post(entry.mcp, list, { ...session, authorization }));
      const result = answer?.result as { tools: Array<{ name: string }> } | undefined;
      return result?.tools.map((tool) => tool.name);
    };

    // The session's token lacks the scope: 403 with the challenge; the same session with a token
    // that has it now (step-up) lists and calls the tool.
    const refused = await post(entry.mcp, JSON.stringify(call(3)), {
      ...session,
      authorization: 'Bearer narrow',
    });
    expect(refused.status).toBe(403);
    expect(refused.headers.get('www-authenticate')).toContain('scope="quick:run"');
    expect(await listed('Bearer narrow')).not.toContain('quick');
    expect(await listed('Bearer wide')).toContain('quick');
    const stepped = await rpcAnswers(
      await post(entry.mcp, JSON.stringify(call(4)), { ...session, authorization: 'Bearer wide' }),
    );
    expect(textOf(stepped[0]?.result)).toBe('quick answer');

    // A batch by the narrow token, in the session the wide one used: every call refused.
    const narrowBatch = await rpcAnswers(
      await post(entry.mcp, JSON.stringify([call(5), call(6)]), {
        ...session,
        authorization: 'Bearer narrow',
      }),
    );
    expect(narrowBatch.map((answer) => answer.error?.message)).toEqual([
      expect.stringContaining('quick:run'),
      expect.stringContaining('quick:run'),
    ]);

    // A batch of four with two calls left of the quota: two run, two are refused, one by one.
    const batch = await rpcAnswers(
      await post(entry.mcp, JSON.stringify([call(7), call(8), call(9), call(10)]), {
        ...session,
        authorization: 'Bearer wide',
      }),
    );
    expect(batch.filter((answer) => answer.result && textOf(answer.result) === 'quick answer')).toHaveLength(
      2,
    );
    expect(
      batch.filter((answer) => /Too many requests: spent/.test(answer.error?.message ?? '')),
    ).toHaveLength(2);
    expect((await entry.runtime.list({})).calls).toHaveLength(3);
  });
});

/** The JSON-RPC answers of a response, as JSON or as an SSE stream of them. */
async function rpcAnswers(
  response: Response,
): Promise<Array<{ id?: unknown; result?: unknown; error?: { code: number; message: string } }>> {
  const text = await response.text();
  const bodies = response.headers.get('content-type')?.includes('text/event-stream')
    ? text
        .split('\n')
        .filter((line) => line.startsWith('data: '))
        .map((line) => JSON.parse(line.slice(6)) as unknown)
    : [JSON.parse(text) as unknown];
  return bodies.flat() as Array<{
    id?: unknown;
    result?: unknown;
    error?: { code: number; message: string };
  }>;
}

describe('limits', () => {
  const initialize = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
  });

  it('refuses a body over its bound with 413, before parsing it', async () => {
    const runtime = createRuntime({ tools: [inlineTool], store: memoryStore() });
    const mcp = createMcpHandler({ runtime, maxBodyBytes: 1_024 });
    opened.push({ runtime, mcp, clients: [] });
    const response = await post(
      mcp,
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', pad: 'x'.repeat(2_000) }),
    );
    expect(response.status).toBe(413);
    expect(await response.json()).toMatchObject({
      error: { message: expect.stringContaining('1024 bytes') },
    });
  });

  /** Opens the session's GET stream, and keeps it open: the session is busy, not idle. */
  async function busy(mcp: McpHandler, opened: Response, authorization = 'Bearer token-a'): Promise<void> {
    const stream = await mcp.fetch(
      new Request('http://localhost/mcp', {
        method: 'GET',
        headers: {
          accept: 'text/event-stream',
          authorization,
          host: 'localhost',
          'mcp-session-id': opened.headers.get('mcp-session-id') ?? '',
          'mcp-protocol-version': '2025-11-25',
        },
      }),
    );
    expect(stream.status).toBe(200);
  }

  it('counts the sessions being opened: a burst of initialize requests opens no more than the cap', async () => {
    const runtime = createRuntime({ tools: [inlineTool], store: memoryStore() });
    const mcp = createMcpHandler({
      runtime,
      authenticate: (request) => TENANTS[request.headers.get('authorization') ?? ''],
      sessions: { perTenant: 3, total: 5 },
    });
    opened.push({ runtime, mcp, clients: [] });
    const burst = await Promise.all(Array.from({ length: 20 }, () => post(mcp, initialize)));
    const admitted = burst.filter((response) => response.status === 200);
    expect(admitted).toHaveLength(3);
    expect(burst.filter((response) => response.status === 429)).toHaveLength(17);
    // Busy (their streams open): none of them is closed to make room.
    for (const response of admitted) await busy(mcp, response);
    const others = await Promise.all(
      Array.from({ length: 20 }, () => post(mcp, initialize, { authorization: 'Bearer token-b' })),
    );
    expect(others.filter((response) => response.status === 200)).toHaveLength(2);
    expect(mcp.sessionCount).toBe(5);
  });

  it('caps sessions per tenant and in all, and frees the ones left idle past their TTL', async () => {
    let now = 0;
    const runtime = createRuntime({ tools: [inlineTool], store: memoryStore() });
    const mcp = createMcpHandler({
      runtime,
      authenticate: (request) => TENANTS[request.headers.get('authorization') ?? ''],
      sessions: { ttlMs: 60_000, perTenant: 2, total: 3 },
      now: () => now,
    });
    opened.push({ runtime, mcp, clients: [] });
    for (let each = 0; each < 2; each++) {
      const response = await post(mcp, initialize);
      expect(response.status).toBe(200);
      await busy(mcp, response);
    }
    const refused = await post(mcp, initialize);
    expect(refused.status).toBe(429);
    expect(await refused.json()).toMatchObject({
      error: { message: expect.stringContaining('all busy (at most 2 per tenant and 3 in all)') },
    });
    const theirs = await post(mcp, initialize, { authorization: 'Bearer token-b' });
    expect(theirs.status).toBe(200);
    await busy(mcp, theirs, 'Bearer token-b');
    expect((await post(mcp, initialize, { authorization: 'Bearer token-b' })).status).toBe(429);
    expect(mcp.sessionCount).toBe(3);
    now += 60_000;
    expect((await post(mcp, initialize)).status).toBe(200);
    expect(mcp.sessionCount).toBe(1);
  });
});

describe('tools/call on 2025-11-25', () => {
  it('answers a client that asked for no task with the acknowledgement at the budget, instead of blocking', async () => {
    const { tool, gate } = gatedTool();
    const entry = await serve([tool]);
    const client = await connect(entry);
    const started = firstValueFrom(entry.runtime.events$.pipe(filter((event) => event.type === 'started')));
    const answer = client.callTool({ name: 'gated', arguments: {} });
    const { callId } = await started;
    entry.clock.increment(BUDGET_MS);
    const result = await answer;
    expect(result.isError).toBeUndefined();
    expect(JSON.stringify(result.content)).toContain(
      `This tool is taking longer than ${BUDGET_MS} ms, so it is continuing in the background.`,
    );
    expect((await entry.runtime.get(callId))?.status).toBe('backgrounded');
    gate.resolve();
    await firstValueFrom(
      entry.runtime.follow({ callId }).pipe(filter((event) => event.type === 'succeeded')),
    );
  });

  it('names the tool and the call_id that bring the result; a client may also follow the call with tasks/get', async () => {
    const { tool, gate } = gatedTool();
    const entry = await serve([tool]);
    const client = await connect(entry);
    const started = firstValueFrom(entry.runtime.events$.pipe(filter((event) => event.type === 'started')));
    const answer = client.callTool({ name: 'gated', arguments: {} });
    const { callId } = await started;
    entry.clock.increment(BUDGET_MS);
    const acknowledgement = JSON.parse(textOf(await answer));
    const taskId = callId.replace('acme/', '');
    expect(acknowledgement).toEqual({
      status: 'running',
      tool: 'gated',
      call_id: taskId,
      message: `This tool is taking longer than ${BUDGET_MS} ms, so it is continuing in the background. Nothing brings its result back on its own: call wait_background with call_id "${taskId}" to get it, before you end your turn if you need it; check_background reports how far it got, and cancel_background stops it. Keep the call_id: it reaches this call from any later session.`,
    });
    expect((await client.experimental.tasks.getTask(taskId)).status).toBe('working');
    gate.resolve();
    expect(await client.callTool({ name: 'wait_background', arguments: { call_id: taskId } })).toMatchObject({
      structuredContent: { call_id: taskId, status: 'succeeded', result: 'finished' },
    });
    expect((await client.experimental.tasks.getTask(taskId)).status).toBe('completed');
  });

  it("with backgroundControl off, lists no control tool and acknowledges in the runtime's words", async () => {
    const { tool, gate } = gatedTool();
    const entry = await serve([tool], { backgroundControl: false });
    const client = await connect(entry);
    expect((await client.listTools()).tools.map(({ name }) => name)).toEqual(['gated']);
    const started = firstValueFrom(entry.runtime.events$.pipe(filter((event) => event.type === 'started')));
    const answer = client.callTool({ name: 'gated', arguments: {} });
    await started;
    entry.clock.increment(BUDGET_MS);
    expect(JSON.parse(textOf(await answer))).toMatchObject({
      message: `This tool is taking longer than ${BUDGET_MS} ms, so it is continuing in the background. Continue the conversation; a later notification will report the result.`,
    });
    await expect(
      client.callTool({ name: 'wait_background', arguments: { call_id: 'x' } }),
    ).rejects.toMatchObject({ code: -32602 });
    gate.resolve();
  });

  it("follows each tool's task support: an inline tool refuses a task, a background tool refuses a plain call", async () => {
    const entry = await serve();
    const client = await connect(entry);
    await expect(
      client.request(
        { method: 'tools/call', params: { name: 'quick', arguments: {} } },
        CreateTaskResultSchema,
        {
          task: { ttl: 60_000 },
        },
      ),
    ).rejects.toMatchObject({ code: -32601 });
    await expect(
      client.request(
        { method: 'tools/call', params: { name: 'batch', arguments: {} } },
        CallToolResultSchema,
      ),
    ).rejects.toMatchObject({ code: -32601 });
    expect((await entry.runtime.list()).calls).toEqual([]);
  });

  it('creates tasks that begin working, lists only them, and refuses a cursor it did not give', async () => {
    const entry = await serve();
    const client = await connect(entry);
    expect(await client.callTool({ name: 'quick', arguments: {} })).toMatchObject({
      content: [{ type: 'text', text: 'quick answer' }],
    });
    const { task } = await client.request(
      { method: 'tools/call', params: { name: 'batch', arguments: {} } },
      CreateTaskResultSchema,
      { task: { ttl: 60_000 } },
    );
    expect(task.status).toBe('working');
    const listed = await client.experimental.tasks.listTasks();
    expect(listed.tasks.map(({ taskId }) => taskId)).toEqual([task.taskId]);
    await expect(client.experimental.tasks.listTasks('not-a-cursor')).rejects.toMatchObject({ code: -32602 });
    // The ids the client sees are the tenant's own: without its prefix.
    expect(task.taskId).not.toContain('acme/');
    expect((await entry.runtime.get(`acme/${task.taskId}`))?.toolName).toBe('batch');
  });
});

describe('tasks/list on 2025-11-25', () => {
  it('pages with the cursors it gave, and refuses forged ones and those of another tenant', async () => {
    const entry = await serve();
    const client = await connect(entry);
    for (let task = 0; task < 101; task++) {
      await client.request(
        { method: 'tools/call', params: { name: 'batch', arguments: {} } },
        CreateTaskResultSchema,
        { task: { ttl: 60_000 } },
      );
    }
    const first = await client.experimental.tasks.listTasks();
    expect(first.tasks).toHaveLength(100);
    const cursor = first.nextCursor as string;
    const second = await client.experimental.tasks.listTasks(cursor);
    expect(second.tasks).toHaveLength(1);
    expect(second.nextCursor).toBeUndefined();
    const store = cursor.split('.')[0] as string;
    for (const forged of ['1', '30000', store, `${store}.AAAAAAAAAAAAAAAAAAAAAA`]) {
      await expect(client.experimental.tasks.listTasks(forged)).rejects.toMatchObject({ code: -32602 });
    }
    const other = new Client({ name: 'test', version: '1.0.0' });
    await other.connect(
      new StreamableHTTPClientTransport(new URL('http://localhost/mcp'), {
        requestInit: { headers: { authorization: 'Bearer token-b', host: 'localhost' } },
        fetch: (url, init) => entry.mcp.fetch(new Request(url, init)),
      }),
    );
    entry.clients.push(other);
    await expect(other.experimental.tasks.listTasks(cursor)).rejects.toMatchObject({ code: -32602 });
  });
});

describe('task times on 2025-11-25', () => {
  it('report the ttl the runtime keeps a task for, the same from creation to end, and a lastUpdatedAt that moves with its status message', async () => {
    const steps = Array.from({ length: 2 }, () => deferred<void>());
    const stepping = defineTool({
      name: 'stepping',
      description: 'Reports a step each time the test lets it',
      input: z.object({}),
      execution: { mode: 'auto' },
      async execute(_args, ctx) {
        for (const [index, step] of steps.entries()) {
          await step.promise;
          ctx.progress({ current: index + 1, total: steps.length });
        }
        return 'stepped';
      },
    });
    const WEEK_MS = 7 * 86_400_000;
    const entry = await serve([stepping], { retentionMs: WEEK_MS });
    const client = await connect(entry);
    const { task } = await client.request(
      { method: 'tools/call', params: { name: 'stepping', arguments: {} } },
      CreateTaskResultSchema,
      { task: { ttl: 60_000 } },
    );
    expect(task.ttl).toBe(WEEK_MS);
    const progressed = () =>
      firstValueFrom(entry.runtime.events$.pipe(filter((event) => event.type === 'progress')));
    const created = Date.parse(task.createdAt);

    entry.clock.increment(5_000);
    const first = progressed();
    steps[0]?.resolve();
    await first;
    const once = await client.experimental.tasks.getTask(task.taskId);
    expect(once.statusMessage).toBe('1/2');
    expect(Date.parse(once.lastUpdatedAt) - created).toBe(5_000);

    entry.clock.increment(7_000);
    const second = progressed();
    steps[1]?.resolve();
    await second;
    const ended = await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    expect(ended.content).toEqual([{ type: 'text', text: 'stepped' }]);
    const done = await client.experimental.tasks.getTask(task.taskId);
    expect(Date.parse(done.lastUpdatedAt) - created).toBe(12_000);
    // Counted from its creation, as first announced: it does not grow when the task completes.
    expect(done.ttl).toBe(WEEK_MS);
  });

  it('acknowledge what a client followed to its result: tasks/result leaves no notification queued', async () => {
    const { tool, gate } = gatedTool();
    const entry = await serve([tool]);
    const client = await connect(entry);
    const results = [];
    for (let round = 0; round < 3; round++) {
      const { task } = await client.request(
        { method: 'tools/call', params: { name: 'gated', arguments: {} } },
        CreateTaskResultSchema,
        { task: { ttl: 60_000 } },
      );
      entry.clock.increment(BUDGET_MS);
      results.push(client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema));
    }
    gate.resolve();
    for (const result of await Promise.all(results)) {
      expect(result.content).toEqual([{ type: 'text', text: 'finished' }]);
    }
    // Three tasks followed to their results: none of their ends waits to be given again (a tenant
    // with `notificationsKept` would otherwise be refused new calls it cannot acknowledge over MCP).
    expect(await entry.runtime.notifications.count({ status: 'queued' })).toBe(0);
  });

  it('report a null ttl when the runtime removes nothing', async () => {
    const entry = await serve();
    const client = await connect(entry);
    const { task } = await client.request(
      { method: 'tools/call', params: { name: 'batch', arguments: {} } },
      CreateTaskResultSchema,
      { task: { ttl: 60_000 } },
    );
    expect(task.ttl).toBeNull();
  });
});

describe('what a task waits for, on 2025-11-25', () => {
  const deleteFile = defineTool({
    name: 'delete_file',
    description: 'Deletes a file, once a person approves',
    input: z.object({ path: z.string(), token: z.string().meta({ writeOnly: true }).optional() }),
    execution: { mode: 'auto', needsApproval: true },
    execute: async ({ path }) => `deleted ${path}`,
  });
  const askName = defineTool({
    name: 'ask_name',
    description: 'Asks for a name, then greets',
    input: z.object({}),
    execution: { mode: 'auto' },
    async execute(_args, ctx) {
      const answer = await ctx.input({
        kind: 'elicitation',
        message: 'Your name?',
        requestedSchema: { type: 'object', properties: { name: { type: 'string' } } },
      });
      return `Hello, ${String(answer.content?.name)}!`;
    },
  });

  it('is input_required; tasks/result asks the client for it (an approval, a form) and gives the result', async () => {
    const entry = await serve([deleteFile, askName]);
    const client = await connect(entry, { elicitation: {} });
    const asked: string[] = [];
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params.message);
      return request.params.message.startsWith('Allow')
        ? { action: 'accept', content: {} }
        : { action: 'accept', content: { name: 'Ada' } };
    });
    const call = async (name: string, args: Record<string, unknown>) => {
      const { task } = await client.request(
        { method: 'tools/call', params: { name, arguments: args } },
        CreateTaskResultSchema,
        { task: { ttl: 60_000 } },
      );
      return task.taskId;
    };

    // Straight to tasks/result: it asks (tasks/get would ask too, see below).
    const deleting = await call('delete_file', { path: 'a.txt', token: 'tok-SECRET-0001' });
    expect(await client.experimental.tasks.getTaskResult(deleting, CallToolResultSchema)).toMatchObject({
      content: [{ type: 'text', text: 'deleted a.txt' }],
    });

    const asking = firstValueFrom(
      entry.runtime.events$.pipe(filter((event) => event.type === 'input_requested')),
    );
    const greeting = await call('ask_name', {});
    await asking;
    expect((await client.experimental.tasks.getTask(greeting)).status).toBe('input_required');
    expect(await client.experimental.tasks.getTaskResult(greeting, CallToolResultSchema)).toMatchObject({
      content: [{ type: 'text', text: 'Hello, Ada!' }],
    });
    expect(asked).toEqual([expect.stringContaining('Allow the tool call delete_file'), 'Your name?']);
    // What the approver is shown of the arguments leaves out the secret ones.
    expect(asked[0]).toContain('"token":"[redacted]"');
    expect(asked[0]).not.toContain('tok-SECRET-0001');
  });
  it('asks for the approval in tasks/get too, for a client that calls tasks/result only once the task ended', async () => {
    const entry = await serve([deleteFile]);
    const client = await connect(entry, { elicitation: {} });
    const asked: string[] = [];
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params.message);
      return { action: 'accept', content: {} };
    });
    const { task } = await client.request(
      { method: 'tools/call', params: { name: 'delete_file', arguments: { path: 'b.txt' } } },
      CreateTaskResultSchema,
      { task: { ttl: 60_000 } },
    );
    // As @modelcontextprotocol/ext-tasks follows a task: tasks/get until it ends, then its result.
    let status = (await client.experimental.tasks.getTask(task.taskId)).status;
    for (let polls = 0; status !== 'completed' && polls < 20; polls++) {
      status = (await client.experimental.tasks.getTask(task.taskId)).status;
    }
    expect(status).toBe('completed');
    expect(asked).toEqual([expect.stringContaining('Allow the tool call delete_file')]);
    expect(await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema)).toMatchObject({
      content: [{ type: 'text', text: 'deleted b.txt' }],
    });
    expect(await entry.runtime.notifications.count({ status: 'queued' })).toBe(0);
  });

  it('asks a plain client that takes elicitation for the approval on its tools/call, and answers with the end', async () => {
    const entry = await serve([deleteFile]);
    const client = await connect(entry, { elicitation: {} });
    client.setRequestHandler(ElicitRequestSchema, async (request) =>
      request.params.message.includes('keep.txt')
        ? { action: 'decline', content: { reason: 'keep it' } }
        : { action: 'accept', content: {} },
    );
    expect(await client.callTool({ name: 'delete_file', arguments: { path: 'c.txt' } })).toMatchObject({
      content: [{ type: 'text', text: 'deleted c.txt' }],
    });
    const declined = await client.callTool({ name: 'delete_file', arguments: { path: 'keep.txt' } });
    expect(declined.isError).toBe(true);
    expect(textOf(declined)).toContain('keep it');
    // Each end was given in its reply: nothing waits to be told again.
    expect(await entry.runtime.notifications.count({ status: 'queued' })).toBe(0);
  });

  it('tells a client without elicitation that the call waits for its approval: input_required, awaiting_approval', async () => {
    const entry = await serve([deleteFile]);
    const client = await connect(entry);
    expect(textOf(await client.callTool({ name: 'delete_file', arguments: { path: 'd.txt' } }))).toContain(
      'awaiting_approval',
    );
    const { task } = await client.request(
      { method: 'tools/call', params: { name: 'delete_file', arguments: { path: 'e.txt' } } },
      CreateTaskResultSchema,
      { task: { ttl: 60_000 } },
    );
    expect((await client.experimental.tasks.getTask(task.taskId)).status).toBe('input_required');
  });
});

describe("what a tool's prepare asks for, on 2025-11-25", () => {
  const report = defineTool({
    name: 'report',
    description: 'Asks whose report, then writes it as a task',
    input: z.object({}),
    execution: { mode: 'auto' },
    async prepare(_args, ctx) {
      const answer = await ctx.input(
        {
          kind: 'elicitation',
          message: 'Whose report?',
          requestedSchema: { type: 'object', properties: { name: { type: 'string' } } },
        },
        { name: 'owner' },
      );
      return { owner: String(answer.content?.name) };
    },
    execute: async (_args, ctx) => `report for ${ctx.prepared.owner}`,
  });

  it('is asked of the client before the call begins, with a plain call and with a task', async () => {
    const entry = await serve([report]);
    const client = await connect(entry, { elicitation: {} });
    const asked: string[] = [];
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params.message);
      return { action: 'accept', content: { name: `Ada ${asked.length}` } };
    });
    expect(await client.callTool({ name: 'report', arguments: {} })).toMatchObject({
      content: [{ type: 'text', text: 'report for Ada 1' }],
    });
    const { task } = await client.request(
      { method: 'tools/call', params: { name: 'report', arguments: {} } },
      CreateTaskResultSchema,
      { task: { ttl: 60_000 } },
    );
    expect(await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema)).toMatchObject({
      content: [{ type: 'text', text: 'report for Ada 2' }],
    });
    expect(asked).toEqual(['Whose report?', 'Whose report?']);
    // Only the calls that began are kept: nothing for the rounds that asked.
    expect((await entry.runtime.list({})).calls.map((call) => call.status)).toEqual([
      'succeeded',
      'succeeded',
    ]);
  });
});
