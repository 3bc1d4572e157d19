import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { type ServerProcess, startServer } from '@baton/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * A phase of invalid UTF-8 and NUL on every door of the server: in call bodies, ids, paths, query
 * strings and header values, on REST, event streams, and MCP of both generations (sessions opened
 * with garbage client names among them). Such a phase once took a server from 110 MB to 1.5 GB.
 *
 * Bounds, on this 2-core machine with other tests beside: RSS at most 100 MB above what the server
 * had once warmed up (measured: 20-26 MB, the heap under load and SQLite's cache; as much with the
 * MCP session cap lifted, so the 100 sessions it lets open are not what keeps it low), no 5xx, and an
 * honest call served afterwards. As in the soak test, V8's old space is capped so that the peak
 * measures what the server keeps and not when V8 collects: a server that kept what it should not
 * runs out of heap, and fails this test.
 *
 * Replay a run with the seed it printed: `INVALID_INPUT_SEED=123`.
 */

const REQUESTS = Number(process.env.INVALID_INPUT_REQUESTS ?? 12_000);
const IN_FLIGHT = 4;
const RSS_GROWTH_BOUND_MB = 100;
const OLD_SPACE_MB = 128;
const SEED = Number(process.env.INVALID_INPUT_SEED ?? Date.now() % 2_147_483_647);

let server: ServerProcess;
beforeAll(async () => {
  server = await startServer({ nodeFlags: [`--max-old-space-size=${OLD_SPACE_MB}`] });
  process.stdout.write(`invalid input seed: ${SEED} (replay with INVALID_INPUT_SEED=${SEED})\n`);
}, 60_000);
afterAll(() => server.stop());

function rssMb(pid: number): number {
  const kb = Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
  return kb / 1024;
}

/** A small seeded generator (mulberry32), so that a failing run can be replayed. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const next = random(SEED);
const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T;

/** Bytes that are not UTF-8 (lone continuation bytes, overlong forms, surrogates) and NUL. */
function invalidBytes(): Buffer {
  const pieces = [
    [0x80],
    [0xc0, 0x80],
    [0xed, 0xa0, 0x80],
    [0xff, 0xfe],
    [0xf4, 0x90, 0x80, 0x80],
    [0x00],
    [0xe2, 0x82],
    [0x61],
  ];
  const length = 1 + Math.floor(next() * 24);
  return Buffer.from(Array.from({ length }, () => pick(pieces)).flat());
}

/** Invalid bytes, percent-encoded for a path or a query string. */
function percentEncoded(): string {
  return [...invalidBytes()].map((byte) => `%${byte.toString(16).padStart(2, '0')}`).join('');
}

/** Invalid bytes as raw header-value bytes (no CR, LF or NUL, which end a header). */
function headerBytes(): Buffer {
  return Buffer.from([...invalidBytes()].filter((byte) => byte >= 0x20));
}

/** NUL and a lone surrogate, escaped in JSON (valid JSON, invalid text for a store). */
const ESCAPED = ['\\u0000', '\\ud800', 'a\\u0000b', '\\udfff\\u0000'];

function jsonWith(prefix: string, garbage: Buffer | string, suffix: string): Buffer {
  return Buffer.concat([Buffer.from(prefix), Buffer.from(garbage), Buffer.from(suffix)]);
}

interface Sent {
  method: string;
  path: string;
  headers?: Array<[string, string | Buffer]>;
  body?: Buffer;
}

const MCP_HEADERS: Array<[string, string]> = [
  ['Content-Type', 'application/json'],
  ['Accept', 'application/json, text/event-stream'],
];
const MODERN_META =
  '"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"f","version":"1"}}';

/** One request with invalid input somewhere. */
function invalidRequest(): Sent {
  const garbage = next() < 0.5 ? invalidBytes() : pick(ESCAPED);
  switch (Math.floor(next() * 9)) {
    case 0:
      return {
        method: 'POST',
        path: '/v1/calls',
        headers: [['Content-Type', 'application/json']],
        body: jsonWith('{"name":"echo","sessionId":"', garbage, `","args":{"text":"${pick(ESCAPED)}"}}`),
      };
    case 1:
      return {
        method: 'POST',
        path: '/v1/calls',
        headers: [['Content-Type', 'application/json']],
        body: jsonWith('{"name":"echo","args":{"text":"', garbage, '"},"sessionId":"s","callId":"c"}'),
      };
    case 2:
      return { method: 'GET', path: `/v1/calls/${percentEncoded()}/events` };
    case 3:
      return { method: 'GET', path: `/v1/sessions/${percentEncoded()}/events` };
    case 4:
      return { method: 'GET', path: `/v1/calls?sessionId=${percentEncoded()}&tool=${percentEncoded()}` };
    case 5:
      return {
        method: 'GET',
        path: `/v1/notifications?sessionId=${percentEncoded()}`,
        headers: [[pick(['Last-Event-ID', 'Authorization', 'X-Request-Id', 'Origin']), headerBytes()]],
      };
    case 6:
      return {
        method: 'POST',
        path: '/mcp',
        headers: MCP_HEADERS,
        body: jsonWith(
          '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"',
          garbage,
          `"},${MODERN_META}}}`,
        ),
      };
    case 7:
      return {
        method: 'POST',
        path: '/mcp',
        headers: MCP_HEADERS,
        body: jsonWith(
          '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"',
          garbage,
          '","version":"1"}}}',
        ),
      };
    default:
      return {
        method: 'POST',
        path: '/mcp',
        headers: [...MCP_HEADERS, ['Mcp-Session-Id', headerBytes()], ['Mcp-Protocol-Version', headerBytes()]],
        body: Buffer.from('{"jsonrpc":"2.0","id":1,"method":"tools/list"}'),
      };
  }
}

/**
 * Sends one request as raw bytes on a connection of its own and gives its status (0: the
 * connection closed with no answer); an event stream that was accepted is closed once its first
 * bytes arrive.
 */
function send(address: string, { method, path, headers = [], body }: Sent): Promise<number> {
  const { hostname, port } = new URL(address);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    const head = [
      Buffer.from(`${method} ${path} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nConnection: close\r\n`),
      ...headers.map(([name, value]) =>
        Buffer.concat([Buffer.from(`${name}: `), Buffer.from(value), Buffer.from('\r\n')]),
      ),
      Buffer.from(`Content-Length: ${body?.length ?? 0}\r\n\r\n`),
    ];
    // Not ended from this side: a client that half-closes has gone away, for Node's server (it
    // drops the answer of a request still being handled), and `Connection: close` ends it there.
    socket.write(Buffer.concat([...head, body ?? Buffer.alloc(0)]));
    let first = '';
    socket.on('data', (chunk: Buffer) => {
      if (first === '') first = chunk.toString('latin1');
      if (first.includes('text/event-stream')) socket.destroy();
    });
    socket.on('close', () => resolve(Number(first.split(' ')[1] ?? 0)));
    socket.on('error', reject);
  });
}

describe('invalid UTF-8 and NUL on every route', () => {
  it(`keeps memory bounded and answers without a 5xx (${REQUESTS} requests)`, {
    timeout: 180_000,
  }, async () => {
    const pid = server.child.pid as number;
    // Warm up: the first requests compile, load the MCP SDK and fill caches.
    for (let i = 0; i < 400; i++) await send(server.address, invalidRequest());
    const baseline = rssMb(pid);
    let peak = baseline;
    const statuses = new Map<number, number>();
    /** What was sent, of each request answered with a 5xx or not at all. */
    const unanswered: string[] = [];
    let sent = 0;
    const sender = async () => {
      while (sent < REQUESTS) {
        sent++;
        const request = invalidRequest();
        const status = await send(server.address, request);
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
        if (status >= 500 || status === 0)
          unanswered.push(
            `${status} ${request.method} ${request.path} ${JSON.stringify(request.headers?.map(([name, value]) => [name, String(value)]))} ${request.body?.toString('latin1') ?? ''}`,
          );
        if (sent % 500 === 0) peak = Math.max(peak, rssMb(pid));
      }
    };
    await Promise.all(Array.from({ length: IN_FLIGHT }, sender));
    peak = Math.max(peak, rssMb(pid));
    process.stdout.write(
      `invalid input: ${REQUESTS} requests, statuses ${JSON.stringify(Object.fromEntries(statuses))}, ` +
        `RSS ${baseline.toFixed(0)} MB after warm-up, peak ${peak.toFixed(0)} MB\n`,
    );

    expect(unanswered).toEqual([]);
    expect(peak - baseline).toBeLessThan(RSS_GROWTH_BOUND_MB);
    const honest = await fetch(`${server.address}/v1/calls`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'echo', args: { text: 'still here' }, sessionId: 'honest' }),
    });
    expect(await honest.json()).toMatchObject({ status: 'succeeded', output: { text: 'still here' } });
  });
});
