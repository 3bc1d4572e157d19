import { defineTool } from '@baton/contracts';
import { createRuntime, type Runtime } from '@baton/runtime';
import fc from 'fast-check';
import type { FastifyInstance } from 'fastify';
import { type JWTPayload, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { demoTools } from '../src/demo-tools.js';
import { createServer } from '../src/server.js';
import { forged, freePort, signingKey, startIssuer } from './oauth-issuer.js';

/**
 * Arbitrary credentials and OAuth routes against a server that takes a real issuer's tokens:
 * whatever the `Authorization` header holds, no answer is a 5xx, a refusal says how to authenticate
 * (its `WWW-Authenticate` names the metadata), and the metadata routes answer any path under them.
 *
 * Replay a failure with the seed it printed: `FUZZ_SEED=123 npx vitest run oauth-fuzz`.
 */

const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : Date.now() % 2_147_483_647;
const RUNS = Number(process.env.FUZZ_RUNS ?? 600);

let runtime: Runtime;
let app: FastifyInstance;
let issuer: Awaited<ReturnType<typeof startIssuer>>;
let resource: string;
let key: Awaited<ReturnType<typeof signingKey>>;

beforeAll(async () => {
  const port = await freePort();
  resource = `http://127.0.0.1:${port}/`;
  key = await signingKey('key-1');
  issuer = await startIssuer(resource, [key.jwk]);
  runtime = createRuntime({ tools: demoTools });
  await runtime.ready;
  app = createServer({
    runtime,
    tokens: { 'a-static-token-of-acme-01': 'acme' },
    oauth: {
      issuer: issuer.issuer,
      resource,
      tenantClaim: 'org',
      tenantScope: 'baton:tenant',
      keysCooldownMs: 0,
    },
    quotas: { callsPerMinute: 100_000 },
  });
  await app.listen({ host: '127.0.0.1', port });
  process.stdout.write(`oauth fuzz seed: ${SEED} (replay with FUZZ_SEED=${SEED})\n`);
}, 30_000);

afterAll(async () => {
  await app.close();
  await runtime.close();
  await issuer.close();
});

const b64 = (value: unknown) =>
  Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');
const text = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 120 }),
  fc.constantFrom('', ' ', 'null', '__proto__', 'x'.repeat(5_000)),
);
const claims = fc.record(
  {
    iss: fc.oneof(fc.constant('ISSUER'), text),
    aud: fc.oneof(fc.constant('RESOURCE'), text, fc.array(text, { maxLength: 2 })),
    org: fc.oneof(fc.constantFrom('acme', 'bolt', 'a b', ''), text, fc.integer()),
    sub: fc.oneof(fc.constantFrom('alice', 'acme'), text),
    scope: fc.oneof(fc.constantFrom('tools', 'tools baton:tenant', ''), text),
    exp: fc.oneof(fc.integer(), fc.constant(Math.floor(Date.now() / 1000) + 300), text),
    nbf: fc.oneof(fc.integer(), text),
  },
  { requiredKeys: [] },
);

/** A credential: garbage, a JWT's shape with any header and claims, or one signed by the issuer's key. */
const credential = fc.oneof(
  text,
  text.map((token) => `Bearer ${token}`),
  fc
    .tuple(fc.jsonValue({ maxDepth: 3 }), claims, text)
    .map(([header, body, signature]) => `Bearer ${b64(header)}.${b64(body)}.${b64(signature)}`),
  fc
    .tuple(fc.constantFrom('none', 'HS256', 'ES256', 'RS256', 'x'), claims)
    .map(([alg, body]) => `Bearer ${b64({ alg, kid: 'key-1', typ: 'at+jwt' })}.${b64(body)}.`),
  claims.map((body) => ({ signed: body })),
  fc.constantFrom(
    'Basic YTpi',
    'Bearer',
    'bearer a-static-token-of-acme-01',
    'Bearer a-static-token-of-acme-01',
  ),
);

/** Claims signed by the issuer's own key, as JWT bytes (jose refuses some claims: they go unsigned). */
async function signed({ iss, aud, ...rest }: Record<string, unknown>): Promise<string> {
  const payload = {
    ...rest,
    iss: iss === 'ISSUER' ? issuer.issuer : iss,
    aud: aud === 'RESOURCE' ? resource : aud,
  };
  try {
    return await new SignJWT(payload as JWTPayload)
      .setProtectedHeader({ alg: 'ES256', kid: 'key-1', typ: 'at+jwt' })
      .sign(key.privateKey);
  } catch {
    return `${b64({ alg: 'ES256', kid: 'key-1' })}.${b64(payload)}.`;
  }
}

const ROUTES = [
  ['GET', '/.well-known/oauth-protected-resource'],
  ['GET', '/.well-known/oauth-protected-resource/PATH'],
  ['GET', '/v1/calls'],
  ['POST', '/v1/calls'],
  ['GET', '/v1/calls/PATH'],
  ['GET', '/v1/tools'],
  ['GET', '/v1/notifications'],
  ['GET', '/.well-known/agent-card.json'],
  ['POST', '/mcp'],
  ['POST', '/a2a'],
  ['GET', '/metrics'],
] as const;

describe('fuzzing the OAuth resource server', () => {
  it('answers any credential on any route without a 5xx, and every 401 but the operators’ /metrics names the metadata', {
    timeout: 120_000,
  }, async () => {
    const statuses = new Set<number>();
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...ROUTES),
        fc.oneof(text, fc.stringMatching(/^[a-z0-9/._~%-]{0,40}$/)).map((path) => encodeURIComponent(path)),
        credential,
        async ([method, template], path, given) => {
          const credentials = typeof given === 'string' ? given : `Bearer ${await signed(given.signed)}`;
          // What a server reads of a header sent as UTF-8: its bytes as Latin-1, with no control characters.
          const authorization = [...Buffer.from(credentials, 'utf8').toString('latin1')]
            .filter((char) => char === '\t' || (char >= ' ' && char !== '\u007f'))
            .join('');
          const answer = await app.inject({
            method,
            url: template.replace('PATH', path),
            headers: {
              authorization,
              'content-type': 'application/json',
              accept: 'application/json, text/event-stream',
            },
            payload:
              method === 'POST'
                ? JSON.stringify({
                    name: 'echo',
                    args: { text: 'x' },
                    sessionId: 's',
                    jsonrpc: '2.0',
                    id: 1,
                    method: 'tools/list',
                  })
                : undefined,
          });
          statuses.add(answer.statusCode);
          expect(answer.statusCode).toBeLessThan(500);
          if (answer.statusCode === 401) {
            const challenge = String(answer.headers['www-authenticate']);
            // `/metrics` takes operator tokens alone: its challenge names no OAuth metadata.
            if (template === '/metrics') expect(challenge).toMatch(/^Bearer/);
            else expect(challenge).toContain('resource_metadata="');
          }
        },
      ),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    );
    // It reached past the credentials as well as being refused at them.
    expect(statuses).toContain(200);
    expect(statuses).toContain(401);
    expect((await app.inject('/healthz')).statusCode).toBe(200);
  });
});

describe('fuzzing the doors with valid tokens and any body, batches included', () => {
  const QUOTA = 5;
  let guarded: { runtime: Runtime; app: FastifyInstance; resource: string; close: () => Promise<void> };
  const sessions = new Map<string, string>();
  const tokens = new Map<string, string>();

  beforeAll(async () => {
    const port = await freePort();
    const base = `http://127.0.0.1:${port}/`;
    const vault = defineTool({
      name: 'vault_export',
      description: 'Exports the vault: only for tokens that hold vault:read',
      scope: 'vault:read',
      input: z.object({ what: z.string() }),
      execute: ({ what }) => `exported ${what}`,
    });
    const guardedRuntime = createRuntime({ tools: [...demoTools, vault], builtins: ['spawn_background'] });
    await guardedRuntime.ready;
    const guardedApp = createServer({
      runtime: guardedRuntime,
      oauth: { issuer: issuer.issuer, resource: base, tenantClaim: 'org', keysCooldownMs: 0 },
      // acme may start QUOTA calls in all: its clock stands still, so nothing refills.
      quotas: { tenants: { acme: { callsPerMinute: QUOTA } }, callsPerMinute: 100_000, now: () => 0 },
    });
    await guardedApp.listen({ host: '127.0.0.1', port });
    guarded = {
      runtime: guardedRuntime,
      app: guardedApp,
      resource: base,
      close: async () => {
        await guardedApp.close();
        await guardedRuntime.close();
      },
    };
    // A narrow and a wide user of acme, and a wide user of bolt, each with a 2025-11-25 session.
    for (const [name, org, scope] of [
      ['narrow', 'acme', 'tools'],
      ['wide', 'acme', 'tools vault:read'],
      ['other', 'bolt', 'tools vault:read'],
    ] as const) {
      const token = await forged(key.privateKey, 'key-1', {
        iss: issuer.issuer,
        aud: base,
        org,
        sub: name,
        scope,
      });
      tokens.set(name, token);
      const opened = await guardedApp.inject({
        method: 'POST',
        url: '/mcp',
        headers: mcpHeaders(token),
        payload: {
          jsonrpc: '2.0',
          id: 0,
          method: 'initialize',
          params: {
            protocolVersion: '2025-11-25',
            capabilities: {},
            clientInfo: { name: 'fuzz', version: '1' },
          },
        },
      });
      sessions.set(name, String(opened.headers['mcp-session-id']));
    }
  }, 30_000);
  afterAll(async () => guarded?.close());

  const mcpHeaders = (token: string) => ({
    authorization: `Bearer ${token}`,
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '2025-11-25',
  });
  const toolName = fc.constantFrom('echo', 'vault_export', 'spawn_background', 'sleep', 'nope');
  const args = fc.oneof(
    fc.constant({ text: 'x' }),
    fc.constant({ what: 'keys' }),
    fc.constant({ tool: 'vault_export', args: { what: 'keys' } }),
    fc.constant({
      tool: 'vault_export',
      args: { what: 'keys' },
      schedule: { scheduled_at: '2020-01-01T00:00:00Z' },
    }),
    fc.jsonValue({ maxDepth: 2 }),
  );
  const toolCall = fc
    .tuple(fc.integer({ min: 1, max: 1_000_000 }), toolName, args)
    .map(([id, name, given]) => ({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name, arguments: given },
    }));
  const body = fc.oneof(
    toolCall,
    fc.array(toolCall, { minLength: 1, maxLength: 8 }),
    fc.jsonValue({ maxDepth: 3 }),
    fc.tuple(toolName, args).map(([name, given]) => ({ name, args: given, sessionId: 's' })),
  );

  it('answers any body at any door without a 5xx, and starts no call past its caller’s quota or scope', {
    timeout: 120_000,
  }, async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('narrow', 'wide', 'other'),
        fc.constantFrom('/mcp', '/v1/calls', '/a2a'),
        body,
        async (who, url, payload) => {
          const token = tokens.get(who) ?? '';
          const answer = await guarded.app.inject({
            method: 'POST',
            url,
            headers: {
              ...mcpHeaders(token),
              ...(url === '/mcp' ? { 'mcp-session-id': sessions.get(who) ?? '' } : { 'a2a-version': '1.0' }),
            },
            payload: JSON.stringify(payload),
          });
          expect(answer.statusCode).toBeLessThan(500);
        },
      ),
      {
        seed: SEED,
        numRuns: Math.ceil(RUNS / 2),
        endOnFailure: true,
        // Run first whatever the seed: a holder of vault:read (of bolt, whose quota is wide) calls
        // the gated tool, and one without the scope does, so the scope check below is never vacuous
        // (a seed may happen to start no vault_export at all).
        examples: [
          [
            'other',
            '/mcp',
            {
              jsonrpc: '2.0',
              id: 1,
              method: 'tools/call',
              params: { name: 'vault_export', arguments: { what: 'keys' } },
            },
          ],
          ['narrow', '/v1/calls', { name: 'vault_export', args: { what: 'keys' }, sessionId: 's' }],
        ],
      },
    );
    const { calls } = await guarded.runtime.list({ limit: 10_000 });
    // A refusal for the request's own faults (no such tool, bad arguments) took no quota.
    const started = calls.filter(
      (call) => !['tool_not_found', 'invalid_arguments'].includes(call.error?.code ?? ''),
    );
    const acme = started.filter((call) => call.caller?.tenant === 'acme');
    // It reached the quota (more were asked for than it lets in), and ran the gated tool for those who may.
    expect(acme).toHaveLength(QUOTA);
    const vaultCalls = started.filter((each) => each.toolName === 'vault_export');
    expect(vaultCalls.length).toBeGreaterThan(0);
    for (const call of vaultCalls) expect(call.caller?.scopes).toContain('vault:read');
  });
});
