import { createServer as createHttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRuntime, type Runtime } from '@baton/runtime';
import { SimulatedClock } from '@baton/runtime/testing';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoTools } from '../src/demo-tools.js';
import { createServer } from '../src/server.js';
import { TokenIntrospection } from '../src/token-introspection.js';
import {
  CLIENT_ID,
  freePort,
  RESOURCE_SERVER_ID,
  RESOURCE_SERVER_SECRET,
  signingKey,
  startIssuer,
} from './oauth-issuer.js';

let runtime: Runtime;
let app: FastifyInstance;
let base: string;
let issuer: Awaited<ReturnType<typeof startIssuer>>;

beforeAll(async () => {
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  const resource = `${base}/`;
  issuer = await startIssuer(resource, [(await signingKey('key-1')).jwk], { accessTokenFormat: 'opaque' });
  runtime = createRuntime({ tools: demoTools });
  await runtime.ready;
  app = createServer({
    runtime,
    oauth: {
      issuer: issuer.issuer,
      resource,
      tenantClaim: 'client_id',
      introspection: { clientId: RESOURCE_SERVER_ID, clientSecret: RESOURCE_SERVER_SECRET },
    },
  });
  await app.listen({ host: '127.0.0.1', port });
}, 30_000);

afterAll(async () => {
  await app.close();
  await runtime.close();
  await issuer.close();
});

const call = (token: string) =>
  fetch(`${base}/v1/calls`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ name: 'echo', args: { text: 'tide' }, sessionId: 's' }),
  });

describe('opaque access tokens, by token introspection (RFC 7662) against oidc-provider', () => {
  it('takes an opaque token the issuer says is active and for this server: its client is the tenant', async () => {
    const token = await issuer.token();
    expect(token.split('.')).toHaveLength(1);
    const response = await call(token);
    expect(response.status).toBe(200);
    const { callId } = (await response.json()) as { callId: string };
    expect((await runtime.get(`${CLIENT_ID}/${callId}`))?.toolName).toBe('echo');
  });

  it.each([
    ['one the issuer never made', async () => 'an-opaque-token-the-issuer-never-made', /not active/],
    ['one issued for another audience', () => issuer.token('http://other.example/'), /aud/],
  ])('refuses %s with 401 and invalid_token', async (_what, tokenOf, described) => {
    const response = await call(await tokenOf());
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toContain('error="invalid_token"');
    expect(((await response.json()) as { error: { message: string } }).error.message).toMatch(described);
  });
});

describe('TokenIntrospection', () => {
  it('asks once for a token in use, again after a minute or past its exp, and once in 30 s for an inactive one', async () => {
    const asked: string[] = [];
    const endpoint = createHttpServer((request, response) => {
      let body = '';
      request.on('data', (chunk) => {
        body += chunk;
      });
      request.on('end', () => {
        const token = new URLSearchParams(body).get('token') ?? '';
        asked.push(token);
        response.setHeader('content-type', 'application/json');
        response.end(JSON.stringify(token === 'live' ? { active: true, exp: 1_000_000 } : { active: false }));
      });
    });
    await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', resolve));
    const clock = new SimulatedClock();
    // Its exp is 1,000,000 s: a minute and a half from now.
    clock.set(1_000_000_000 - 90_000);
    const introspection = new TokenIntrospection(
      { clientId: 'rs', clientSecret: 'secret' },
      async () => `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}/introspect`,
      fetch,
      () => clock.now(),
    );
    try {
      expect(await introspection.claimsOf('live')).toMatchObject({ active: true });
      expect(await introspection.claimsOf('live')).toMatchObject({ active: true });
      clock.increment(60_000);
      await introspection.claimsOf('live');
      // Kept until its exp, 30 s later, not for another minute: past it, it is asked of again.
      clock.increment(29_000);
      await introspection.claimsOf('live');
      clock.increment(2_000);
      await introspection.claimsOf('live');
      // A made-up or revoked token, sent again and again, costs the issuer one request in 30 s.
      for (let i = 0; i < 5; i++) expect(await introspection.claimsOf('gone')).toBeUndefined();
      clock.increment(30_000);
      expect(await introspection.claimsOf('gone')).toBeUndefined();
      expect(asked).toEqual(['live', 'live', 'live', 'gone', 'gone']);
    } finally {
      endpoint.close();
    }
  });
});
