import { defineTool } from '@baton/contracts';
import { createRuntime, type Runtime } from '@baton/runtime';
import { SimulatedClock } from '@baton/runtime/testing';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { demoTools } from '../src/demo-tools.js';
import { createServer } from '../src/server.js';

const A = 'token-of-tenant-a-0001';
const B = 'token-of-tenant-b-0002';
const OPERATOR = 'token-of-the-operator-03';

let runtime: Runtime;
let app: FastifyInstance;

beforeEach(async () => {
  const report = defineTool({
    name: 'report',
    description: 'A report made in the background',
    input: z.object({}),
    execution: { mode: 'background' },
    execute: () => 'the report',
  });
  runtime = createRuntime({ tools: [...demoTools, report], clock: new SimulatedClock() });
  await runtime.ready;
  app = createServer({ runtime, tokens: { [A]: 'acme', [B]: 'bolt' }, operatorTokens: [OPERATOR] });
});

afterEach(async () => {
  await app.close();
  await runtime.close();
});

/** A request as a tenant's client sends it: its token, and JSON for every POST (the server wants it). */
const as = (token: string | undefined, options: InjectOptions) =>
  app.inject({
    ...options,
    headers: {
      ...(options.method === 'POST' ? { 'content-type': 'application/json' } : {}),
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
  });

describe('tenants', () => {
  it('refuses a request without a known token with 401, but answers /healthz', async () => {
    expect((await as(undefined, { url: '/v1/calls' })).statusCode).toBe(401);
    expect((await as('not-a-token-at-all-x', { url: '/v1/calls' })).statusCode).toBe(401);
    expect((await as(undefined, { url: '/mcp', method: 'POST', payload: {} })).statusCode).toBe(401);
    expect((await as(undefined, { url: '/healthz' })).statusCode).toBe(200);
  });

  it('leads a browser at / to the inspector, and answers /favicon.ico with its icon, without a token', async () => {
    const root = await as(undefined, { url: '/' });
    expect([root.statusCode, root.headers.location]).toEqual([302, '/inspector/']);
    const favicon = await as(undefined, { url: '/favicon.ico' });
    expect([favicon.statusCode, favicon.headers.location]).toEqual([302, '/inspector/favicon.svg']);
    const icon = await as(undefined, { url: '/inspector/favicon.svg' });
    expect([icon.statusCode, icon.headers['content-type']]).toEqual([200, 'image/svg+xml']);
  });

  it("finds a call by its id in the list (a page of one, or of none), and not another tenant's", async () => {
    await as(A, {
      method: 'POST',
      url: '/v1/calls',
      payload: { name: 'echo', args: { text: 'x' }, sessionId: 's', callId: 'mine-1' },
    });
    expect((await as(A, { url: '/v1/calls?callId=mine-1' })).json().calls).toMatchObject([
      { callId: 'mine-1' },
    ]);
    expect((await as(A, { url: '/v1/calls?callId=mine' })).json()).toEqual({ calls: [] });
    expect((await as(B, { url: '/v1/calls?callId=mine-1' })).json()).toEqual({ calls: [] });
  });

  it('tells anyone /healthz that it is up, and only an operator its instance and counters', async () => {
    for (const token of [undefined, A]) {
      const health = await as(token, { url: '/healthz' });
      expect([health.statusCode, health.json()]).toEqual([200, { ok: true }]);
    }
    const operator = await as(OPERATOR, { url: '/healthz' });
    expect(operator.json()).toEqual({ ok: true, instanceId: expect.any(String), stats: expect.any(Object) });
  });

  it("answers /metrics, which counts every tenant's calls, to an operator token only; that token reaches no call", async () => {
    await as(A, {
      method: 'POST',
      url: '/v1/calls',
      payload: { name: 'echo', args: { text: 'x' }, sessionId: 's' },
    });
    const operator = await as(OPERATOR, { url: '/metrics' });
    expect(operator.statusCode).toBe(200);
    expect(operator.body).toContain('baton_calls_ended_total{status="succeeded",tool="echo"} 1');
    const message =
      "/metrics counts every tenant's calls: it answers an operator token (operatorTokens, BATON_OPERATOR_TOKENS)";
    const tenant = await as(A, { url: '/metrics' });
    expect([tenant.statusCode, tenant.json()]).toEqual([403, { error: { code: 'forbidden', message } }]);
    const nobody = await as(undefined, { url: '/metrics' });
    expect([nobody.statusCode, nobody.json()]).toEqual([401, { error: { code: 'unauthorized', message } }]);
    expect((await as('not-a-token-at-all-x', { url: '/metrics' })).statusCode).toBe(401);
    const calls = await as(OPERATOR, { url: '/v1/calls' });
    expect([calls.statusCode, calls.json().error]).toEqual([
      403,
      { code: 'forbidden', message: "an operator token names no tenant: calls need a tenant's token" },
    ]);
  });

  it("answers 404 to tenant B for every route on tenant A's call, and lists none of A's calls to B", async () => {
    const created = await as(A, {
      method: 'POST',
      url: '/v1/calls',
      payload: { name: 'deploy', args: { env: 'staging' }, sessionId: 'shared-name', callId: 'd1' },
    });
    expect(created.json()).toMatchObject({ callId: 'd1', status: 'backgrounded' });

    const routes: InjectOptions[] = [
      { url: '/v1/calls/d1' },
      { url: '/v1/calls/d1/events' },
      { method: 'POST', url: '/v1/calls/d1/cancel' },
      { method: 'POST', url: '/v1/calls/d1/approve' },
      { method: 'POST', url: '/v1/calls/d1/reject', payload: { reason: 'no' } },
      { method: 'POST', url: '/v1/calls/d1/messages', payload: { message: 'go' } },
    ];
    for (const route of routes) {
      const reply = await as(B, route);
      expect({ url: route.url, status: reply.statusCode }).toEqual({ url: route.url, status: 404 });
    }
    expect((await as(B, { url: '/v1/calls' })).json().calls).toEqual([]);
    expect((await as(B, { url: '/v1/calls?sessionId=shared-name' })).json().calls).toEqual([]);

    // A still sees and controls its call, under the ids it gave.
    expect((await as(A, { url: '/v1/calls' })).json().calls).toMatchObject([
      { callId: 'd1', sessionId: 'shared-name', approval: 'pending' },
    ]);
    expect((await as(A, { method: 'POST', url: '/v1/calls/d1/cancel' })).json()).toEqual({ cancelled: true });
  });

  it('gives each tenant its own call for the same callId, and its own notifications', async () => {
    for (const [token, env] of [
      [A, 'staging'],
      [B, 'production'],
    ] as const) {
      const reply = await as(token, {
        method: 'POST',
        url: '/v1/calls',
        payload: { name: 'deploy', args: { env }, sessionId: 's', callId: 'same' },
      });
      expect(reply.json()).toMatchObject({ callId: 'same', status: 'backgrounded' });
    }
    expect((await as(A, { url: '/v1/calls/same' })).json().args).toEqual({ env: 'staging' });
    expect((await as(B, { url: '/v1/calls/same' })).json().args).toEqual({ env: 'production' });

    await as(A, { method: 'POST', url: '/v1/calls/same/approve' });
    for (let turn = 0; turn < 3; turn++) await new Promise((resolve) => setImmediate(resolve));
    const [notification] = (await as(A, { url: '/v1/notifications' })).json();
    expect(notification).toMatchObject({ callId: 'same', sessionId: 's' });
    expect((await as(B, { url: '/v1/notifications' })).json()).toEqual([]);
    const ack = `/v1/notifications/${notification.id}/ack`;
    expect((await as(B, { method: 'POST', url: ack })).statusCode).toBe(404);
    expect((await as(A, { method: 'POST', url: ack })).json()).toEqual({ acknowledged: true });
  });

  it("names the tenant's own call id in what its model is told, not the id the runtime keeps", async () => {
    const reply = await as(A, {
      method: 'POST',
      url: '/v1/calls',
      payload: { name: 'report', sessionId: 's', callId: 'r1' },
    });
    expect(reply.json()).toMatchObject({ callId: 'r1', status: 'backgrounded', output: { call_id: 'r1' } });
    const record = (await as(A, { url: '/v1/calls/r1' })).json();
    expect(record).toMatchObject({ callId: 'r1', acknowledgement: { call_id: 'r1' } });
  });
});
