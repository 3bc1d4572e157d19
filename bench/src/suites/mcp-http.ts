import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineTool } from '@baton/contracts';
import { createMcpHandler, type McpHandler, toNodeHandler } from '@baton/mcp';
import { createRuntime } from '@baton/runtime';
import { sqliteStore } from '@baton/store-sqlite';
import { McpServer, createMcpHandler as sdkHandler } from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { BenchConfig } from '../config.js';
import { type Row, ratioAtLeast, throughput } from '../measure.js';

const MEASURE = '9. MCP tools/call over HTTP (2026-07-28, stateless)';
const BATON = 'Baton handler (SQLite, every call recorded)';
const BARE = 'bare SDK v2 server';
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
  // The SDK builds a server per request: a few hundred calls a second, so rounds are short.
  const calls = config.smoke ? 300 : 2_000;
  const inFlight = 16;
  const batonRounds: number[] = [];
  const bareRounds: number[] = [];
  try {
    for (let round = 0; round < config.rounds; round++) {
      bareRounds.push(await throughput(calls, inFlight, (i) => callOver(bareServer.url, i)));
      batonRounds.push(await throughput(calls, inFlight, (i) => callOver(batonServer.url, i)));
    }
    const recorded = await runtime.list({ limit: 1 });
    if (recorded.calls.length === 0) throw new Error('Baton recorded no call');
  } finally {
    for (const { server } of [batonServer, bareServer]) {
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
  ];
}
