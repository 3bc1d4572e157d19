import { connect } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { describe, expect, it } from 'vitest';
import { testServer } from './test-server.js';

const json = { 'content-type': 'application/json' };

/** A call to `deploy`, which waits for approval: the thing a hostile page would most like to approve. */
async function pendingDeploy(app: FastifyInstance, headers: Record<string, string> = {}) {
  const reply = await app.inject({
    method: 'POST',
    url: '/v1/calls',
    headers: { ...json, ...headers },
    payload: { name: 'deploy', args: { env: 'production' }, sessionId: 's', callId: 'd1' },
  });
  expect(reply.json()).toMatchObject({ status: 'backgrounded', output: { status: 'awaiting_approval' } });
}

describe('a server on loopback without tokens, as a browser reaches it', () => {
  it('refuses a Host that is not its own (DNS rebinding), on the API and on MCP', async () => {
    const { app } = await testServer();
    for (const url of ['/v1/calls', '/healthz']) {
      const reply = await app.inject({ url, headers: { host: 'evil.example.com' } });
      expect([reply.statusCode, reply.json().error.code]).toEqual([403, 'forbidden_host']);
    }
    // An MCP client reads JSON-RPC.
    const mcp = await app.inject({ url: '/mcp', headers: { host: 'evil.example.com' } });
    expect([mcp.statusCode, mcp.json()]).toEqual([
      403,
      {
        jsonrpc: '2.0',
        error: {
          code: -32000,
          message: `the Host header "evil.example.com" names none of this server's hosts`,
        },
        id: null,
      },
    ]);
    for (const host of ['localhost:8787', '127.0.0.1:8787', '[::1]:8787', 'LOCALHOST']) {
      expect((await app.inject({ url: '/v1/calls', headers: { host } })).statusCode).toBe(200);
    }
  });

  it('refuses a cross-site approval, by its Origin or by Sec-Fetch-Site, and the call still waits', async () => {
    const { app, runtime } = await testServer();
    await pendingDeploy(app);
    const attempts = [
      { origin: 'https://evil.example.com' },
      { origin: 'http://localhost:3000' },
      { 'sec-fetch-site': 'cross-site' },
    ];
    for (const headers of attempts) {
      const reply = await app.inject({
        method: 'POST',
        url: '/v1/calls/d1/approve',
        headers: { ...json, ...headers },
      });
      expect([reply.statusCode, reply.json().error.code]).toEqual([403, 'cross_site_request']);
    }
    expect((await runtime.get('d1'))?.approval).toBe('pending');
  });

  it('takes its own pages by any of its loopback names, and refuses another site on MCP in JSON-RPC', async () => {
    const { app } = await testServer();
    await pendingDeploy(app);
    const sameServer = { host: '127.0.0.1:8787', origin: 'http://localhost:8787' };
    const approved = await app.inject({
      method: 'POST',
      url: '/v1/calls/d1/approve',
      headers: { ...json, ...sameServer },
    });
    expect(approved.json()).toEqual({ approved: true });
    const initialize = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    };
    const accept = { accept: 'application/json, text/event-stream' };
    const mcp = await app.inject({
      method: 'POST',
      url: '/mcp',
      headers: { ...json, ...accept, ...sameServer },
      payload: initialize,
    });
    expect(mcp.statusCode).toBe(200);
    const otherPort = await app.inject({
      method: 'POST',
      url: '/mcp',
      headers: { ...json, ...accept, host: '127.0.0.1:8787', origin: 'http://localhost:3000' },
      payload: initialize,
    });
    expect([otherPort.statusCode, otherPort.json()]).toEqual([
      403,
      {
        jsonrpc: '2.0',
        error: { code: -32000, message: 'requests from http://localhost:3000 may not change anything here' },
        id: null,
      },
    ]);
  });

  it('refuses a POST that is not JSON, as a plain HTML form sends it, even with no body', async () => {
    const { app, runtime } = await testServer();
    await pendingDeploy(app);
    for (const type of [
      'application/x-www-form-urlencoded',
      'text/plain',
      'multipart/form-data; boundary=x',
    ]) {
      const reply = await app.inject({
        method: 'POST',
        url: '/v1/calls/d1/approve',
        headers: { 'content-type': type },
        payload: '',
      });
      expect([reply.statusCode, reply.json().error.code]).toEqual([415, 'unsupported_media_type']);
    }
    const bare = await app.inject({ method: 'POST', url: '/v1/calls/d1/approve' });
    expect(bare.json().error).toEqual({
      code: 'unsupported_media_type',
      message: 'a POST must be application/json, not without a content type',
    });
    expect((await runtime.get('d1'))?.approval).toBe('pending');
  });

  it('lets its own pages (same origin, as the inspector) and allowed origins change state', async () => {
    const { app } = await testServer({ webSafety: { allowedOrigins: ['https://console.example.com'] } });
    await pendingDeploy(app, { origin: 'http://localhost:80', 'sec-fetch-site': 'same-origin' });
    const approved = await app.inject({
      method: 'POST',
      url: '/v1/calls/d1/approve',
      headers: {
        ...json,
        host: 'localhost:80',
        origin: 'http://localhost:80',
        'sec-fetch-site': 'same-origin',
      },
    });
    expect(approved.json()).toEqual({ approved: true });
    const cancel = await app.inject({
      method: 'POST',
      url: '/v1/calls/d1/cancel',
      headers: { ...json, origin: 'https://console.example.com', 'sec-fetch-site': 'cross-site' },
    });
    expect(cancel.statusCode).toBe(200);
  });
});

describe('a server with tokens', () => {
  it('takes any Host (a browser cannot send the token), unless hosts are given', async () => {
    const tokens = { 'token-of-sixteen-chars': 'acme' };
    const auth = { authorization: 'Bearer token-of-sixteen-chars', host: 'baton.internal:8787' };
    const { app } = await testServer({ tokens });
    expect((await app.inject({ url: '/v1/calls', headers: auth })).statusCode).toBe(200);
    const { app: pinned } = await testServer({ tokens, webSafety: { allowedHosts: ['baton.example.com'] } });
    expect((await pinned.inject({ url: '/v1/calls', headers: auth })).statusCode).toBe(403);
    const named = { ...auth, host: 'baton.example.com' };
    expect((await pinned.inject({ url: '/v1/calls', headers: named })).statusCode).toBe(200);
  });
});

/** One raw HTTP/1.1 request as written (fetch and inject would tidy it), and its status and body. */
async function rawRequest(address: string, head: string): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(address);
  const socket = connect(Number(port), hostname);
  socket.write(`${head}\r\nConnection: close\r\n\r\n`);
  let text = '';
  socket.setEncoding('utf8');
  for await (const chunk of socket) text += chunk;
  const [headers = '', body = ''] = text.split('\r\n\r\n');
  return { status: Number(headers.split(' ')[1]), body };
}

describe('a request names one host', () => {
  for (const [setting, options] of [
    ['without tokens', {}],
    ['with tokens, which take any Host', { tokens: { 'token-of-sixteen-chars': 'acme' } }],
  ] as const) {
    it(`refuses an absolute-form target for another host and two Host headers (${setting})`, async () => {
      const { app } = await testServer(options);
      const address = await app.listen({ host: '127.0.0.1', port: 0 });
      const { port } = new URL(address);
      const auth = 'tokens' in options ? '\r\nAuthorization: Bearer token-of-sixteen-chars' : '';
      const other = await rawRequest(
        address,
        `GET http://other.example/v1/calls HTTP/1.1\r\nHost: 127.0.0.1:${port}${auth}`,
      );
      expect([other.status, JSON.parse(other.body).error]).toEqual([
        421,
        {
          code: 'misdirected_request',
          message: `the request is for "other.example", not for this server ("127.0.0.1:${port}")`,
        },
      ]);
      const twice = await rawRequest(
        address,
        `GET /v1/calls HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nHost: other.example${auth}`,
      );
      expect([twice.status, JSON.parse(twice.body).error]).toEqual([
        400,
        { code: 'invalid_host', message: 'a request names its host once, not in 2 Host headers' },
      ]);
      // The absolute form for this very host is a request like any other.
      const own = await rawRequest(
        address,
        `GET http://127.0.0.1:${port}/v1/calls HTTP/1.1\r\nHost: 127.0.0.1:${port}${auth}`,
      );
      expect(own.status).toBe(200);
    });
  }
});
