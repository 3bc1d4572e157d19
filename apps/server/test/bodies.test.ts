import { connect } from 'node:net';
import { DEFAULT_MAX_BODY_DEPTH, DEFAULT_MAX_BODY_KEYS } from '@baton/contracts';
import { describe, expect, it } from 'vitest';
import { testServer } from './test-server.js';

/** A call whose arguments hold `value`. */
const callWith = (value: string) => `{"name":"echo","args":{"text":"x","extra":${value}},"sessionId":"s"}`;
const nested = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`;
const keys = (count: number) => `{${Array.from({ length: count }, (_, i) => `"k${i}":0`).join(',')}}`;

/** A stateless MCP (2026-07-28) tools/call whose arguments hold `value`. */
function mcpCallWith(value: string): string {
  const meta =
    '"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}';
  return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x","extra":${value}},${meta}}}`;
}
const MCP_HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2026-07-28',
  'mcp-method': 'tools/call',
  'mcp-name': 'echo',
};

describe('request bodies, bounded before they are parsed', () => {
  it('refuses on REST a body nested deeper than the limit, or of more keys, with 413 payload_too_large', async () => {
    const { app } = await testServer();
    for (const [value, says] of [
      [nested(500_000), `nests deeper than ${DEFAULT_MAX_BODY_DEPTH} levels`],
      [keys(DEFAULT_MAX_BODY_KEYS + 1), `more than ${DEFAULT_MAX_BODY_KEYS} keys`],
    ] as const) {
      const reply = await app.inject({
        method: 'POST',
        url: '/v1/calls',
        headers: { 'content-type': 'application/json' },
        payload: callWith(value),
      });
      expect(reply.statusCode).toBe(413);
      expect(reply.json()).toEqual({
        error: { code: 'payload_too_large', message: expect.stringContaining(says) },
      });
    }
    // Within the limits, the arguments' own check answers as ever.
    const deepArgs = await app.inject({
      method: 'POST',
      url: '/v1/calls',
      headers: { 'content-type': 'application/json' },
      payload: callWith(nested(70)),
    });
    expect(deepArgs.json()).toMatchObject({ status: 'failed', error: { code: 'invalid_arguments' } });
  });

  it('refuses on MCP the same bodies, in JSON-RPC, with 413', async () => {
    const { app } = await testServer();
    for (const value of [nested(500_000), keys(DEFAULT_MAX_BODY_KEYS + 1)]) {
      const reply = await app.inject({
        method: 'POST',
        url: '/mcp',
        headers: MCP_HEADERS,
        payload: mcpCallWith(value),
      });
      expect(reply.statusCode).toBe(413);
      expect(reply.json()).toMatchObject({
        jsonrpc: '2.0',
        error: { code: -32000, message: /Payload Too Large/ },
      });
    }
  });

  it('takes the limits it is given', async () => {
    const { app } = await testServer({ bodyShape: { maxDepth: 4, maxKeys: 5 } });
    const deep = await app.inject({
      method: 'POST',
      url: '/v1/calls',
      headers: { 'content-type': 'application/json' },
      payload: callWith(nested(3)),
    });
    expect(deep.json()).toMatchObject({ error: { code: 'payload_too_large', message: /deeper than 4/ } });
    const many = await app.inject({
      method: 'POST',
      url: '/v1/calls',
      headers: { 'content-type': 'application/json' },
      payload: callWith('[1,2]'),
    });
    expect(many.json()).toMatchObject({ error: { code: 'payload_too_large', message: /more than 5 keys/ } });
  });

  it('refuses a body that is not UTF-8 with invalid_utf8 on REST, and a parse error on MCP, rather than changing its text', async () => {
    const { app, runtime } = await testServer();
    const bytes = Buffer.concat([
      Buffer.from('{"name":"echo","args":{"text":"'),
      Buffer.from([0xff, 0xfe, 0x80]),
      Buffer.from('"},"sessionId":"s","callId":"c1"}'),
    ]);
    const rest = await app.inject({
      method: 'POST',
      url: '/v1/calls',
      headers: { 'content-type': 'application/json' },
      payload: bytes,
    });
    expect(rest.statusCode).toBe(400);
    expect(rest.json()).toEqual({ error: { code: 'invalid_utf8', message: 'the body is not valid UTF-8' } });
    expect(await runtime.get('c1')).toBeUndefined();
    const mcp = await app.inject({
      method: 'POST',
      url: '/mcp',
      headers: MCP_HEADERS,
      payload: Buffer.concat([
        Buffer.from(mcpCallWith('"')).subarray(0, -3),
        Buffer.from([0xc0, 0x80]),
        Buffer.from('"}}}'),
      ]),
    });
    expect(mcp.statusCode).toBe(400);
    expect(mcp.json()).toMatchObject({
      error: { code: -32700, message: 'Parse error: the body is not valid UTF-8' },
    });
  });

  it('answers 408 and closes a connection whose body does not arrive in time', async () => {
    const { app } = await testServer({ requestTimeoutMs: 500 });
    const address = await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = new URL(address);
    const socket = connect(Number(port), '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write(
      'POST /v1/calls HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n{',
    );
    // A byte now and then, never the whole body.
    const trickle = setInterval(() => socket.write(' '), 100);
    let answer = '';
    socket.on('data', (chunk: Buffer) => {
      answer += chunk.toString();
    });
    const started = Date.now();
    await new Promise((resolve) => socket.once('close', resolve));
    clearInterval(trickle);
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    expect(answer).toContain('"code":"request_timeout"');
    // Within its time and Node's check after it, on a busy machine.
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});
