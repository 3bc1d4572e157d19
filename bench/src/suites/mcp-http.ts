import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineTool } from '@baton/contracts';
import { createMcpHandler, type McpHandler, toNodeHandler } from '@baton/mcp';
import { createRuntime } from '@baton/runtime';
import { sqliteStore } from '@baton/store-sqlite';
import {
  McpServer,
  createMcpHandler as sdkHandler,
  WebStandardStreamableHTTPServerTransport,
} from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { BenchConfig } from '../config.js';
import { latencies, percentile, type Row, ratioAtLeast, ratioAtMost, throughput } from '../measure.js';

const MEASURE = '9. MCP tools/call over HTTP (2026-07-28, stateless)';
const LATENCY = '9. MCP tools/call latency, one at a time (p50)';
const SESSION_LATENCY = '9. MCP tools/call latency, 2025-11-25 session, one at a time (p50)';
const LEGACY = '2025-11-25';
const BATON = 'Baton handler (SQLite, every call recorded)';
const BARE = 'bare SDK v2 server';
const BARE_SESSIONS = 'bare SDK v2 server, a transport per session';
const REVISION = '2026-07-28';

/** The same trivial tool's answer on both sides: what the model would see. */
const answer = (i: number) => ({ content: [{ type: 'text' as const, text: String(i + 1) }] });

async function listen(handler: Pick<McpHandler, 'fetch'>): Promise<{ server: Server; url: string }> {
  const serve = toNodeHandler(handler);
  const server = createServer((request, response) => {
    void serve(request, response);
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp` };
}

/** One stateless tools/call, as a 2026-07-28 client sends it: envelope in `_meta`, routing headers. */
async function callOver(url: string, i: number): Promise<void> {
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': REVISION,
      'mcp-method': 'tools/call',
      'mcp-name': 'add_one',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: i,
      method: 'tools/call',
      params: {
        name: 'add_one',
        arguments: { i },
        _meta: {
          'io.modelcontextprotocol/protocolVersion': REVISION,
          'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '1.0.0' },
          'io.modelcontextprotocol/clientCapabilities': {},
        },
      },
    }),
  });
  const body = (await response.json()) as { result?: { content?: Array<{ text?: string }> } };
  if (body.result?.content?.[0]?.text !== String(i + 1)) {
    throw new Error(`tools/call ${i} answered ${JSON.stringify(body).slice(0, 300)}`);
  }
}

/** The JSON-RPC message of a response: its body, or the last `data:` line of its event stream. */
async function messageOf(response: Response): Promise<{ result?: { content?: Array<{ text?: string }> } }> {
  const text = await response.text();
  if (!response.headers.get('content-type')?.includes('text/event-stream')) return JSON.parse(text);
  const data = text.split('\n').filter((line) => line.startsWith('data: '));
  return JSON.parse((data.at(-1) ?? 'data: {}').slice(6));
}

/** A 2025-11-25 session, as the SDK's clients open one; then its tools/call, one request each. */
async function legacySession(url: string): Promise<(i: number) => Promise<void>> {
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  const opened = await fetch(url, {
    method: 'POST',
    headers,
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: LEGACY, capabilities: {}, clientInfo: { name: 'bench', version: '1.0.0' } },
    }),
  });
  await opened.text();
  const session = {
    ...headers,
    'mcp-session-id': opened.headers.get('mcp-session-id') ?? '',
    'mcp-protocol-version': LEGACY,
  };
  await (
    await fetch(url, {
      method: 'POST',
      headers: session,
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    })
  ).text();
  return async (i) => {
    const response = await fetch(url, {
      method: 'POST',
      headers: session,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: i + 1,
        method: 'tools/call',
        params: { name: 'add_one', arguments: { i } },
      }),
    });
    const body = await messageOf(response);
    if (body.result?.content?.[0]?.text !== String(i + 1)) {
      throw new Error(`tools/call ${i} answered ${JSON.stringify(body).slice(0, 300)}`);
    }
  };
}

/** A bare SDK v2 server with 2025-11-25 sessions: a transport and a server per session. */
function bareSessions(): Pick<McpHandler, 'fetch'> {
  const sessions = new Map<string, WebStandardStreamableHTTPServerTransport>();
  return {
    async fetch(request) {
      const id = request.headers.get('mcp-session-id');
      let transport = id === null ? undefined : sessions.get(id);
      if (!transport) {
        const opened: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport(
          {
            sessionIdGenerator: randomUUID,
            onsessioninitialized: (session) => {
              sessions.set(session, opened);
            },
          },
        );
        const server = new McpServer({ name: 'bare', version: '1.0.0' });
        server.registerTool('add_one', { inputSchema: z.object({ i: z.number() }) }, async ({ i }) =>
          answer(i),
        );
        await server.connect(opened);
        transport = opened;
      }
      return transport.handleRequest(request);
    },
  };
}

/**
 * A trivial tool called over MCP Streamable HTTP: Baton's handler, which runs each call through
 * the runtime and records it in SQLite, beside a bare SDK v2 server answering from memory. Both
 * sit behind the same Node adapter; the client keeps its connections alive.
 */
export async function mcpOverHttp(config: BenchConfig): Promise<Row[]> {
  const dir = mkdtempSync(join(tmpdir(), 'baton-bench-mcp-'));
  const tool = defineTool({
    name: 'add_one',
    description: 'adds one',
    input: z.object({ i: z.number() }),
    // Idempotent, as the bare server's is: it runs at once (see add-one.ts).
    execution: { idempotent: true },
    execute: async ({ i }) => answer(i),
  });
  const runtime = createRuntime({
    tools: [tool],
    store: sqliteStore({ path: join(dir, 'mcp.db'), synchronous: 'normal' }),
  });
  await runtime.ready;
  const baton = createMcpHandler({ runtime });
  const bare = sdkHandler(
    () => {
      const server = new McpServer({ name: 'bare', version: '1.0.0' });
      server.registerTool('add_one', { inputSchema: z.object({ i: z.number() }) }, async ({ i }) =>
        answer(i),
      );
      return server;
    },
    { legacy: 'reject' },
  );
  const batonServer = await listen(baton);
  const bareServer = await listen(bare);
  const bareSessionServer = await listen(bareSessions());
  // The SDK builds a server per request: a few hundred calls a second, so rounds are short.
  const calls = config.smoke ? 300 : 2_000;
  const inFlight = 16;
  const batonRounds: number[] = [];
  const bareRounds: number[] = [];
  const batonLatency: number[] = [];
  const bareLatency: number[] = [];
  const batonSessionLatency: number[] = [];
  const bareSessionLatency: number[] = [];
  // What a model waits for a fast tool: each call alone, the next sent when the last is answered.
  const sequential = config.smoke ? 200 : 2_000;
  const p50 = async (url: string) => percentile(await latencies(sequential, (i) => callOver(url, i)), 50);
  try {
    for (let round = 0; round < config.rounds; round++) {
      bareRounds.push(await throughput(calls, inFlight, (i) => callOver(bareServer.url, i)));
      batonRounds.push(await throughput(calls, inFlight, (i) => callOver(batonServer.url, i)));
      // In turns, first one then the other, so that neither always runs on a warmer machine.
      const order = round % 2 === 0 ? [bareServer, batonServer] : [batonServer, bareServer];
      for (const served of order)
        (served === bareServer ? bareLatency : batonLatency).push(await p50(served.url));
      const sessions = [
        { url: bareSessionServer.url, values: bareSessionLatency },
        { url: batonServer.url, values: batonSessionLatency },
      ];
      for (const { url, values } of round % 2 === 0 ? sessions : sessions.reverse()) {
        const call = await legacySession(url);
        values.push(percentile(await latencies(sequential, call), 50));
      }
    }
    const recorded = await runtime.list({ limit: 1 });
    if (recorded.calls.length === 0) throw new Error('Baton recorded no call');
  } finally {
    for (const { server } of [batonServer, bareServer, bareSessionServer]) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
    await baton.close();
    await bare.close();
    await runtime.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return [
    {
      measure: MEASURE,
      subject: BATON,
      unit: 'calls/s',
      values: batonRounds,
      comparedWith: BARE,
      target: ratioAtLeast(0.8),
    },
    { measure: MEASURE, subject: BARE, unit: 'calls/s', values: bareRounds },
    {
      measure: LATENCY,
      subject: BATON,
      unit: 'µs',
      values: batonLatency,
      comparedWith: BARE,
      target: ratioAtMost(1.4),
    },
    { measure: LATENCY, subject: BARE, unit: 'µs', values: bareLatency },
    {
      measure: SESSION_LATENCY,
      subject: BATON,
      unit: 'µs',
      values: batonSessionLatency,
      comparedWith: BARE_SESSIONS,
      target: ratioAtMost(1.4),
    },
    { measure: SESSION_LATENCY, subject: BARE_SESSIONS, unit: 'µs', values: bareSessionLatency },
  ];
}
