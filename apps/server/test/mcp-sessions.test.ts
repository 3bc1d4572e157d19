import { createRuntime, type Runtime } from '@baton/runtime';
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { demoTools } from '../src/demo-tools.js';
import { createServer } from '../src/server.js';

let runtime: Runtime;
let app: FastifyInstance;
let now = 1_000_000;

afterEach(async () => {
  await app.close();
  await runtime.close();
});

async function start(mcp: { sessionTtlMs?: number; sessionsPerTenant?: number; sessions?: number }) {
  runtime = createRuntime({ tools: demoTools });
  await runtime.ready;
  const tokens = { 'token-of-tenant-a-1': 'a', 'token-of-tenant-b-1': 'b' };
  app = createServer({ runtime, tokens, mcp: { ...mcp, now: () => now } });
}

const headers = (token: string, session?: string) => ({
  authorization: `Bearer ${token}`,
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  ...(session ? { 'mcp-session-id': session } : {}),
});

function initialize(token: string) {
  return app.inject({
    method: 'POST',
    url: '/mcp',
    headers: headers(token),
    payload: {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'test', version: '1' } },
    },
  });
}

function ping(token: string, session: string) {
  return app.inject({
    method: 'POST',
    url: '/mcp',
    headers: headers(token, session),
    payload: { jsonrpc: '2.0', id: 2, method: 'ping' },
  });
}

const A = 'token-of-tenant-a-1';
const B = 'token-of-tenant-b-1';

/** A call that goes to the background and runs on: its session is busy until it ends. */
async function slowCall(token: string, session: string) {
  const answer = await app.inject({
    method: 'POST',
    url: '/mcp',
    headers: { ...headers(token, session), 'mcp-protocol-version': '2025-11-25' },
    payload: {
      jsonrpc: '2.0',
      id: 3,
      method: 'tools/call',
      params: { name: 'slow_report', arguments: { seconds: 60 } },
    },
  });
  expect(answer.body).toContain('continuing in the background');
}

describe('MCP sessions', () => {
  it('expire after the idle TTL, and the ones in use do not', async () => {
    await start({ sessionTtlMs: 60_000 });
    const idle = (await initialize('token-of-tenant-a-1')).headers['mcp-session-id'] as string;
    const busy = (await initialize('token-of-tenant-a-1')).headers['mcp-session-id'] as string;
    expect(idle).toBeTruthy();
    now += 40_000;
    expect((await ping('token-of-tenant-a-1', busy)).statusCode).toBe(200);
    now += 40_000;
    expect((await ping('token-of-tenant-a-1', busy)).statusCode).toBe(200);
    expect((await ping('token-of-tenant-a-1', idle)).statusCode).toBe(404);
  });

  it('at a cap, close the least recently used idle session for a newcomer; all busy, 429 says what to do', async () => {
    await start({ sessionsPerTenant: 2, sessions: 3 });
    const sessionOf = (response: { headers: Record<string, unknown> }) =>
      response.headers['mcp-session-id'] as string;
    const first = sessionOf(await initialize(A));
    now += 1_000;
    const second = sessionOf(await initialize(A));
    now += 1_000;
    const third = await initialize(A);
    expect(third.statusCode).toBe(200);
    expect((await ping(A, first)).statusCode).toBe(404);
    expect((await ping(A, second)).statusCode).toBe(200);
    // Busy: each has a call that has not ended.
    for (const session of [second, sessionOf(third)]) await slowCall(A, session);
    const refused = await initialize(A);
    expect(refused.statusCode).toBe(429);
    expect(refused.json().error.message).toMatch(
      /^too many open MCP sessions, all busy \(at most 2 per tenant and 3 in all\)/,
    );
    // Tenant B still has room, until the server is full of busy sessions.
    const theirs = await initialize(B);
    expect(theirs.statusCode).toBe(200);
    await slowCall(B, sessionOf(theirs));
    expect((await initialize(B)).statusCode).toBe(429);
  });
});
