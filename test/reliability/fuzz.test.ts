import { request } from 'node:http';
import { freshDatabase, type ThrowawayPostgres, throwawayPostgres } from '@baton/store-postgres/testing';
import { type ServerProcess, startServer } from '@baton/test-support';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * Arbitrary input against the real server: bodies, ids, query parameters and headers on every
 * route, and JSON-RPC on MCP and A2A. No answer is a 5xx, every refusal is in the documented format, the
 * server is up afterwards, and honest calls made all along succeed.
 *
 * Replay a failure with the seed it printed: `FUZZ_SEED=123 npx vitest run reliability/fuzz`.
 */

const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : Date.now() % 2_147_483_647;
const RUNS = Number(process.env.FUZZ_RUNS ?? 1_500);

let postgres: ThrowawayPostgres;
beforeAll(async () => {
  postgres = await throwawayPostgres();
  process.stdout.write(`fuzz seed: ${SEED} (replay with FUZZ_SEED=${SEED})\n`);
}, 60_000);
afterAll(() => postgres.stop());

let server: ServerProcess;
let port: number;

interface Answer {
  status: number;
  type: string;
  body: string;
}

/**
 * One raw HTTP request (no client-side checks, unlike fetch). An event stream that is accepted
 * answers 200 and then stays open: it is read until its first message, then closed.
 */
function send(method: string, path: string, headers: Record<string, string>, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    // A connection of its own: a request the server refuses at the HTTP level closes it.
    const outgoing = request({ host: '127.0.0.1', port, method, path, headers, agent: false }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        text += chunk;
        if (String(response.headers['content-type']).startsWith('text/event-stream')) response.destroy();
      });
      const done = () =>
        resolve({
          status: response.statusCode ?? 0,
          type: String(response.headers['content-type'] ?? ''),
          body: text,
        });
      response.on('end', done);
      response.on('close', done);
    });
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

/** The percent-encoded UTF-8 of any text (a lone surrogate becomes U+FFFD), or raw %-garbage. */
const pathPart = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 140 }).map((text) => encodeURIComponent(text.toWellFormed())),
  fc
    .string({ unit: 'binary', maxLength: 40 })
    .map((text) =>
      [...Buffer.from(text, 'utf8')].map((byte) => `%${byte.toString(16).padStart(2, '0')}`).join(''),
    ),
  fc.stringMatching(/^(%[0-9A-Fa-f]{0,2}|[a-z0-9._~-])*$/),
  fc.constant('x'.repeat(3_000)),
);

const anyText = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 200 }),
  fc.constantFrom('', '\u0000', '\uD800', 'a\u0000b', '__proto__', 'constructor', 'x'.repeat(300)),
);

/** A call whose arguments nest up to 20,000 deep, written as text (JSON.stringify cannot go so deep). */
const deepCall = fc
  .integer({ min: 1, max: 20_000 })
  .map(
    (depth) =>
      `{"name":"echo","sessionId":"fuzz","args":{"text":"x","more":${'{"down":'.repeat(depth)}"bottom"${'}'.repeat(depth)}}}`,
  );

const callBody = fc.record(
  {
    name: fc.oneof(fc.constantFrom('echo', 'slow_report', 'always_fails', 'deploy'), anyText),
    args: fc.oneof(fc.jsonValue({ maxDepth: 6 }), fc.dictionary(anyText, fc.jsonValue({ maxDepth: 3 }))),
    sessionId: fc.oneof(fc.constant('fuzz'), anyText),
    callId: anyText,
    messageId: anyText,
    reason: anyText,
  },
  { requiredKeys: [] },
);

const bodyText = fc.oneof(
  callBody.map((body) => JSON.stringify(body)),
  deepCall,
  fc.jsonValue().map((value) => JSON.stringify(value)),
  fc.string({ unit: 'binary', maxLength: 300 }),
  fc.constantFrom(
    '',
    '{',
    '{"__proto__":{"polluted":1}}',
    '{"constructor":{"prototype":{"x":1}}}',
    'null',
    '[]',
  ),
);

const ROUTES = [
  ['POST', '/v1/calls'],
  ['GET', '/v1/calls'],
  ['GET', '/v1/calls/:id'],
  ['GET', '/v1/calls/:id/events'],
  ['GET', '/v1/sessions/:id/events'],
  ['POST', '/v1/calls/:id/cancel'],
  ['POST', '/v1/calls/:id/approve'],
  ['POST', '/v1/calls/:id/reject'],
  ['GET', '/v1/notifications'],
  ['POST', '/v1/notifications/:id/ack'],
  ['GET', '/v1/tools'],
  ['GET', '/v1/machine'],
  ['GET', '/openapi.json'],
  ['GET', '/.well-known/agent-card.json'],
  ['GET', '/nowhere/:id'],
  ['DELETE', '/v1/calls/:id'],
] as const;

const QUERY_KEYS = ['sessionId', 'status', 'tool', 'cursor', 'limit', 'after', 'format', 'x'];

const httpRequest = fc.record({
  route: fc.constantFrom(...ROUTES),
  id: pathPart,
  query: fc.array(fc.tuple(fc.constantFrom(...QUERY_KEYS), pathPart), { maxLength: 4 }),
  contentType: fc.constantFrom(
    'application/json',
    'application/json; charset=utf-8',
    'text/plain',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=x',
    '',
  ),
  lastEventId: fc.option(fc.stringMatching(/^[ -~]{0,30}$/), { nil: undefined }),
  body: fc.option(bodyText, { nil: undefined }),
});

/** Every refusal of the API: `{ error: { code, message } }`. */
function expectApiError(answer: Answer): void {
  expect(answer.type).toMatch(/^application\/json/);
  const parsed = JSON.parse(answer.body) as { error?: { code?: unknown; message?: unknown } };
  expect(typeof parsed.error?.code).toBe('string');
  expect(typeof parsed.error?.message).toBe('string');
}

/** Honest calls, one after another until told to stop: every one must succeed. */
async function honestTraffic(stop: { done: boolean }): Promise<string[]> {
  const failures: string[] = [];
  let n = 0;
  while (!stop.done) {
    const answer = await send(
      'POST',
      '/v1/calls',
      { 'content-type': 'application/json' },
      JSON.stringify({ name: 'echo', args: { text: `honest ${n}` }, sessionId: `honest-${n % 3}` }),
    );
    const reply = JSON.parse(answer.body) as { status?: string; output?: { text?: string } };
    if (answer.status !== 200 || reply.status !== 'succeeded' || reply.output?.text !== `honest ${n}`) {
      failures.push(`${answer.status} ${answer.body.slice(0, 200)}`);
    }
    n++;
  }
  return failures;
}

describe.each([
  ['SQLite', async () => ({})],
  ['PostgreSQL', async () => ({ BATON_STORE: await freshDatabase(postgres.url, 'fuzz') })],
])('fuzzing the server on %s', (_store, environment) => {
  beforeAll(async () => {
    server = await startServer({ env: await environment() });
    port = Number(new URL(server.address).port);
  }, 60_000);
  afterAll(() => server.stop());

  it('answers any HTTP request without a 5xx, refuses in the API error format, and fails no honest call', {
    timeout: 240_000,
  }, async () => {
    const stop = { done: false };
    const honest = honestTraffic(stop);
    try {
      await fc.assert(
        fc.asyncProperty(httpRequest, async ({ route, id, query, contentType, lastEventId, body }) => {
          const method = route[0];
          const template: string = route[1];
          const search = query.map(([key, value]) => `${key}=${value}`).join('&');
          const path = `${template.replace(':id', id)}${search ? `?${search}` : ''}`;
          const headers: Record<string, string> = {};
          if (contentType) headers['content-type'] = contentType;
          if (lastEventId !== undefined) headers['last-event-id'] = lastEventId;
          const answer = await send(method, path, headers, body);
          expect(answer.status).toBeLessThan(500);
          if (answer.status >= 400) expectApiError(answer);
        }),
        { seed: SEED, numRuns: RUNS, endOnFailure: true },
      );
    } finally {
      stop.done = true;
    }
    expect(await honest).toEqual([]);
    expect((await send('GET', '/healthz', {})).status).toBe(200);
  });

  it('answers any JSON-RPC on /mcp without a 5xx, and stays up', { timeout: 120_000 }, async () => {
    const message = fc.record(
      {
        jsonrpc: fc.oneof(fc.constant('2.0'), anyText),
        id: fc.oneof(fc.integer(), anyText, fc.constant(null)),
        method: fc.oneof(
          fc.constantFrom(
            'initialize',
            'tools/list',
            'tools/call',
            'tasks/get',
            'tasks/list',
            'tasks/cancel',
            'ping',
          ),
          anyText,
        ),
        params: fc.oneof(
          fc.jsonValue({ maxDepth: 5 }),
          fc.record({
            name: fc.oneof(fc.constantFrom('echo', 'slow_report'), anyText),
            arguments: fc.jsonValue({ maxDepth: 4 }),
            cursor: anyText,
            taskId: anyText,
            protocolVersion: fc.constantFrom('2025-11-25', '2025-06-18', '1999-01-01'),
          }),
        ),
      },
      { requiredKeys: [] },
    );
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          message.map((value) => JSON.stringify(value)),
          fc.array(message, { maxLength: 3 }).map((batch) => JSON.stringify(batch)),
          bodyText,
        ),
        fc.option(fc.uuid(), { nil: undefined }),
        async (body, sessionId) => {
          const headers: Record<string, string> = {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
          };
          if (sessionId) headers['mcp-session-id'] = sessionId;
          const answer = await send('POST', '/mcp', headers, body);
          expect(answer.status).toBeLessThan(500);
        },
      ),
      { seed: SEED, numRuns: Math.ceil(RUNS / 2), endOnFailure: true },
    );
    expect((await send('GET', '/healthz', {})).status).toBe(200);
  });
  it('answers any JSON-RPC on /a2a without a 5xx, and stays up', { timeout: 120_000 }, async () => {
    const message = fc.record(
      {
        jsonrpc: fc.oneof(fc.constant('2.0'), anyText),
        id: fc.oneof(fc.integer(), anyText, fc.constant(null)),
        method: fc.oneof(
          fc.constantFrom('SendMessage', 'GetTask', 'ListTasks', 'CancelTask', 'SubscribeToTask'),
          anyText,
        ),
        params: fc.oneof(
          fc.jsonValue({ maxDepth: 5 }),
          fc.record({
            id: anyText,
            message: fc.record({
              messageId: anyText,
              role: fc.constantFrom('ROLE_USER', 'ROLE_AGENT', 'user', 7),
              parts: fc.array(
                fc.oneof(
                  fc.record({
                    data: fc.record({
                      skill: fc.constantFrom('echo', 'slow_report'),
                      arguments: fc.jsonValue({ maxDepth: 3 }),
                    }),
                  }),
                  fc.record({ text: anyText }),
                  fc.jsonValue({ maxDepth: 3 }),
                ),
                { maxLength: 3 },
              ),
            }),
            configuration: fc.jsonValue({ maxDepth: 3 }),
          }),
        ),
      },
      { requiredKeys: [] },
    );
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          message.map((value) => JSON.stringify(value)),
          bodyText,
        ),
        fc.constantFrom('application/json', 'text/plain', ''),
        // Mostly the version the agent speaks, so that the requests reach its methods.
        fc.constantFrom('1.0', '1.0', '1.0', '0.3', '', undefined),
        async (body, contentType, version) => {
          const headers: Record<string, string> = contentType ? { 'content-type': contentType } : {};
          if (version !== undefined) headers['a2a-version'] = version;
          const answer = await send('POST', '/a2a', headers, body);
          expect(answer.status).toBeLessThan(500);
        },
      ),
      { seed: SEED, numRuns: Math.ceil(RUNS / 2), endOnFailure: true },
    );
    expect((await send('GET', '/healthz', {})).status).toBe(200);
  });
});
