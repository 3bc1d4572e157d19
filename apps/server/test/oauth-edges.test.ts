import { createServer as createHttpServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createServer as createTcpServer, type Socket } from 'node:net';
import { createRuntime, type Runtime } from '@baton/runtime';
import type { FastifyInstance } from 'fastify';
import { SignJWT } from 'jose';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { demoTools } from '../src/demo-tools.js';
import type { OAuthOptions } from '../src/oauth.js';
import { createServer } from '../src/server.js';
import { CLIENT_ID, freePort, SCOPE, signingKey, startIssuer } from './oauth-issuer.js';

const opened: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of opened.splice(0).reverse()) await close();
});

/** The server over the demo tools, taking one issuer's tokens. */
async function serve(oauth: () => Omit<OAuthOptions, 'resource'>) {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const runtime: Runtime = createRuntime({ tools: demoTools });
  await runtime.ready;
  const app: FastifyInstance = createServer({ runtime, oauth: { ...oauth(), resource: `${base}/` } });
  await app.listen({ host: '127.0.0.1', port });
  opened.push(
    () => runtime.close(),
    () => app.close(),
  );
  const call = (token: string) =>
    fetch(`${base}/v1/calls`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ name: 'echo', args: { text: 'tide' }, sessionId: 's' }),
    });
  return { base, resource: `${base}/`, call };
}

const refusal = async (response: Response) => ({
  status: response.status,
  message: ((await response.json()) as { error: { message: string } }).error.message,
});

describe('tokens that must be refused', () => {
  let issuer: Awaited<ReturnType<typeof startIssuer>> | undefined;
  afterAll(async () => issuer?.close());

  it('refuses a JWT without exp, one whose typ is not at+jwt, and one with no typ (RFC 9068)', async () => {
    const key = await signingKey('key-1');
    // Only its keys are used: the tokens are signed here, with the claims each case needs.
    issuer = await startIssuer('http://127.0.0.1/unused/', [key.jwk]);
    const server = await serve(() => ({
      issuer: issuer?.issuer ?? '',
      tenantClaim: 'client_id',
      keysCooldownMs: 0,
    }));
    const now = Math.floor(Date.now() / 1000);
    const sign = (typ: string | undefined, claims: Record<string, unknown>, exp = true) => {
      let jwt = new SignJWT({ client_id: CLIENT_ID, scope: SCOPE, ...claims })
        .setProtectedHeader({ alg: 'ES256', kid: 'key-1', ...(typ ? { typ } : {}) })
        .setIssuer(issuer?.issuer ?? '')
        .setAudience(server.resource)
        .setIssuedAt(now - 10);
      if (exp) jwt = jwt.setExpirationTime(now + 300);
      return jwt.sign(key.privateKey);
    };
    expect((await server.call(await sign('at+jwt', {}))).status).toBe(200);
    expect(await refusal(await server.call(await sign('at+jwt', {}, false)))).toEqual({
      status: 401,
      message: 'the token does not say when it expires (exp)',
    });
    for (const typ of ['JWT', undefined, 'id_token+jwt']) {
      expect(await refusal(await server.call(await sign(typ, {})))).toEqual({
        status: 401,
        message: 'the token is not an access token (its typ is not at+jwt)',
      });
    }

    // An issuer that does not say at+jwt: the switch takes its tokens, and still tells an ID token apart.
    const lenient = await serve(() => ({
      issuer: issuer?.issuer ?? '',
      tenantClaim: 'client_id',
      keysCooldownMs: 0,
      requireAccessTokenType: false,
    }));
    const signFor = (typ: string | undefined, claims: Record<string, unknown>) =>
      new SignJWT({ client_id: CLIENT_ID, scope: SCOPE, ...claims })
        .setProtectedHeader({ alg: 'ES256', kid: 'key-1', ...(typ ? { typ } : {}) })
        .setIssuer(issuer?.issuer ?? '')
        .setAudience(lenient.resource)
        .setIssuedAt(now - 10)
        .setExpirationTime(now + 300)
        .sign(key.privateKey);
    expect((await lenient.call(await signFor('JWT', {}))).status).toBe(200);
    expect((await lenient.call(await signFor(undefined, {}))).status).toBe(200);
    expect(await refusal(await lenient.call(await signFor('JWT', { nonce: 'n-1' })))).toEqual({
      status: 401,
      message: 'the token carries nonce: it is an ID token, not an access token',
    });
    expect((await refusal(await lenient.call(await signFor('id_token+jwt', {})))).status).toBe(401);
  });

  it('refuses an introspection answer that says nothing of exp or iss', async () => {
    let answer: Record<string, unknown> = {};
    const endpoint: Server = createHttpServer((request, response) => {
      request.resume();
      request.on('end', () => {
        response.setHeader('content-type', 'application/json');
        response.end(JSON.stringify(answer));
      });
    });
    await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', resolve));
    opened.push(() => new Promise((resolve) => endpoint.close(resolve)));
    const introspect = `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}/introspect`;
    const issuerUrl = 'http://issuer.invalid';
    const server = await serve(() => ({
      issuer: issuerUrl,
      tenantClaim: 'client_id',
      introspection: { clientId: 'rs', clientSecret: 'a-secret', endpoint: introspect },
    }));
    const exp = Math.floor(Date.now() / 1000) + 300;
    const whole = { active: true, iss: issuerUrl, aud: server.resource, client_id: CLIENT_ID, exp };
    answer = whole;
    expect((await server.call('opaque-1')).status).toBe(200);
    const { exp: _exp, ...noExp } = whole;
    answer = noExp;
    expect(await refusal(await server.call('opaque-2'))).toEqual({
      status: 401,
      message: 'the issuer did not say when the token expires (exp)',
    });
    const { iss: _iss, ...noIss } = whole;
    answer = noIss;
    expect(await refusal(await server.call('opaque-3'))).toEqual({
      status: 401,
      message: 'the token was not issued by the configured issuer (iss)',
    });
  });
});

describe('an issuer that stalls', () => {
  it('answers 503 auth_unavailable within seconds, says so on /healthz, and asks it a bounded number of things at once', async () => {
    // Accepts every connection and never answers a byte.
    const sockets = new Set<Socket>();
    const asked: string[] = [];
    const stalled = createTcpServer((socket) => {
      socket.once('data', (head) => asked.push(head.toString().split('\r\n')[0] ?? ''));
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => stalled.listen(0, '127.0.0.1', resolve));
    opened.push(async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => stalled.close(resolve));
    });
    const issuer = `http://127.0.0.1:${(stalled.address() as AddressInfo).port}`;
    const server = await serve(() => ({
      issuer,
      tenantClaim: 'client_id',
      issuerTimeoutMs: 400,
      introspection: { clientId: 'rs', clientSecret: 'a-secret', endpoint: `${issuer}/introspect` },
    }));
    const health = async () => (await (await fetch(`${server.base}/healthz`)).json()) as { issuer?: string };
    expect((await health()).issuer).toBe('reachable');
    const started = Date.now();
    const key = await signingKey('key-1');
    const jwt = await new SignJWT({ client_id: CLIENT_ID })
      .setProtectedHeader({ alg: 'ES256', kid: 'key-1', typ: 'at+jwt' })
      .setExpirationTime('5m')
      .sign(key.privateKey);
    const answered = await server.call(jwt);
    expect(answered.status).toBe(503);
    expect(((await answered.json()) as { error: { code: string } }).error.code).toBe('auth_unavailable');
    expect(Date.now() - started).toBeLessThan(5_000);
    expect((await health()).issuer).toBe('unreachable');

    // Twenty made-up opaque tokens at once: answered 503 each, never more than 8 of them at the issuer.
    asked.length = 0;
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => server.call(`made-up-${i}`)));
    expect(answers.map((response) => response.status)).toEqual(Array(20).fill(503));
    expect(asked.length).toBeGreaterThan(0);
    expect(asked.length).toBeLessThanOrEqual(8);
  }, 30_000);
});
