import { TaskState } from '@a2a-js/sdk';
import { skillMessage } from '@baton/a2a';
import { defineTool } from '@baton/contracts';
import { createRuntime, type Runtime } from '@baton/runtime';
import { SimulatedClock } from '@baton/runtime/testing';
import { eventually } from '@baton/test-support';
import type { FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { demoTools } from '../src/demo-tools.js';
import { TenantQuotas } from '../src/quotas.js';
import { createServer } from '../src/server.js';
import { a2aClientOf, sendTo } from './a2a-client.js';

const A = 'token-of-tenant-a-0001';
const B = 'token-of-tenant-b-0002';
const OPERATOR = 'token-of-the-operator-01';

describe('TenantQuotas: calls per minute as a token bucket, and notifications kept, per tenant', () => {
  it('lets a burst of the quota in, refuses the next with when to come back, and refills evenly', async () => {
    const clock = new SimulatedClock();
    const refused: Array<string | undefined> = [];
    const quotas = new TenantQuotas(
      { callsPerMinute: 6 },
      () => clock.now(),
      (tenant) => refused.push(tenant),
    );
    for (let i = 0; i < 6; i++) expect(await quotas.take('acme')).toBeUndefined();
    expect(await quotas.take('acme')).toMatchObject({ code: 'quota_exceeded', retryAfterSeconds: 10 });
    // Another tenant's bucket is its own.
    expect(await quotas.take('bolt')).toBeUndefined();
    clock.increment(9_000);
    expect((await quotas.take('acme'))?.retryAfterSeconds).toBe(1);
    clock.increment(1_000);
    expect(await quotas.take('acme')).toBeUndefined();
    expect(refused).toEqual(['acme', 'acme']);
  });

  it('takes a tenant’s own quota over every tenant’s, and none is none', async () => {
    const quotas = new TenantQuotas({ callsPerMinute: 1, tenants: { acme: { callsPerMinute: 2 } } });
    const taken = async (tenant: string, times: number) => {
      const answers: boolean[] = [];
      for (let i = 0; i < times; i++) answers.push(Boolean(await quotas.take(tenant)));
      return answers;
    };
    expect(await taken('acme', 3)).toEqual([false, false, true]);
    expect(await taken('bolt', 2)).toEqual([false, true]);
    expect(await new TenantQuotas({}).take('acme')).toBeUndefined();
  });

  it('refuses a tenant that keeps its notifications past its quota, reading the store’s count once a second', async () => {
    const clock = new SimulatedClock();
    const queued = new Map([['acme', 3]]);
    const counts: Array<string | undefined> = [];
    const quotas = new TenantQuotas(
      { notificationsKept: 3 },
      () => clock.now(),
      undefined,
      async (tenant) => {
        counts.push(tenant);
        return queued.get(tenant ?? '') ?? 0;
      },
    );
    expect(await quotas.take('acme')).toMatchObject({
      code: 'quota_exceeded',
      retryAfterSeconds: 5,
      message: expect.stringContaining('keeps 3 notifications not yet acknowledged (at most 3)'),
    });
    expect(await quotas.take('bolt')).toBeUndefined();
    // It acknowledges one: within the second, the count it was refused on still holds.
    queued.set('acme', 2);
    expect(await quotas.take('acme')).toBeDefined();
    clock.increment(1_000);
    expect(await quotas.take('acme')).toBeUndefined();
    expect(counts).toEqual(['acme', 'bolt', 'acme']);
  });
});

describe('a tenant over its quota, on the server', () => {
  let runtime: Runtime;
  let clock: SimulatedClock;
  let app: FastifyInstance;
  let base: string;

  beforeEach(async () => {
    clock = new SimulatedClock();
    runtime = createRuntime({ tools: demoTools, clock });
    await runtime.ready;
    app = createServer({
      runtime,
      tokens: { [A]: 'acme', [B]: 'bolt' },
      operatorTokens: [OPERATOR],
      quotas: { callsPerMinute: 1_000, tenants: { acme: { callsPerMinute: 5 } }, now: () => clock.now() },
    });
    base = await app.listen({ host: '127.0.0.1', port: 0 });
  });

  afterEach(async () => {
    await app.close();
    await runtime.close();
  });

  const call = (token: string, text: string) =>
    app.inject({
      method: 'POST',
      url: '/v1/calls',
      headers: { authorization: `Bearer ${token}` },
      payload: { name: 'echo', args: { text }, sessionId: 's' },
    });

  it('is answered 429 quota_exceeded with Retry-After, keeps nothing of it, while another tenant under load goes on', async () => {
    // Both tenants at once: acme's 40 calls against its 5 a minute, bolt's 40 within its 1,000.
    const [acme, bolt] = await Promise.all(
      [A, B].map((token) => Promise.all(Array.from({ length: 40 }, (_, i) => call(token, `call ${i}`)))),
    );
    expect(bolt?.map((reply) => reply.statusCode)).toEqual(Array(40).fill(200));
    const refused = acme?.filter((reply) => reply.statusCode === 429) ?? [];
    expect(acme?.filter((reply) => reply.statusCode === 200)).toHaveLength(5);
    expect(refused).toHaveLength(35);
    expect(refused[0]?.headers['retry-after']).toBe('12');
    expect(refused[0]?.json()).toMatchObject({
      error: { code: 'quota_exceeded', message: expect.stringContaining('5 calls a minute') },
    });
    expect((await runtime.list({ sessionPrefix: 'acme/' })).calls).toHaveLength(5);
    expect((await runtime.list({ sessionPrefix: 'bolt/' })).calls).toHaveLength(40);
    const metrics = await app.inject({ url: '/metrics', headers: { authorization: `Bearer ${OPERATOR}` } });
    expect(metrics.body).toContain('baton_quota_refusals_total{tenant="acme"} 35');
    expect(metrics.body).not.toContain('baton_quota_refusals_total{tenant="bolt"}');

    // One call's worth of the minute later, one more is let in.
    clock.increment(12_000);
    expect((await call(A, 'again')).statusCode).toBe(200);
    expect((await call(A, 'too soon')).statusCode).toBe(429);
  });

  it('holds over MCP and A2A too: one quota for every way in', async () => {
    for (let i = 0; i < 5; i++) expect((await call(A, `call ${i}`)).statusCode).toBe(200);
    const mcp = await app.inject({
      method: 'POST',
      url: '/mcp',
      headers: {
        authorization: `Bearer ${A}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      payload: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: {} } },
    });
    expect(mcp.statusCode).toBe(429);
    expect(mcp.headers['retry-after']).toBe('12');
    expect(mcp.json()).toMatchObject({ error: { message: expect.stringContaining('5 calls a minute') } });

    const task = await sendTo(await a2aClientOf(base, A), skillMessage('echo', { text: 'tide' }));
    expect(task.status?.state).toBe(TaskState.TASK_STATE_REJECTED);
    expect(JSON.stringify(task.status?.message)).toContain('try again in');
    expect((await runtime.list({ sessionPrefix: 'acme/' })).calls).toHaveLength(5);
  });

  it('refuses a tenant that leaves its notifications unacknowledged past its quota, until it acknowledges', async () => {
    const note = defineTool({
      name: 'note',
      description: 'Notes something in the background: its end is a notification',
      input: z.object({}),
      execution: { mode: 'background' },
      execute: () => 'noted',
    });
    const own = createRuntime({ tools: [note], clock });
    await own.ready;
    const kept = createServer({
      runtime: own,
      tokens: { [A]: 'acme', [B]: 'bolt' },
      quotas: { tenants: { acme: { notificationsKept: 2 } }, now: () => clock.now() },
    });
    try {
      const post = (token: string) =>
        kept.inject({
          method: 'POST',
          url: '/v1/calls',
          headers: { authorization: `Bearer ${token}` },
          payload: { name: 'note', args: {}, sessionId: 's' },
        });
      for (let i = 0; i < 2; i++) expect((await post(A)).statusCode).toBe(200);
      // Their ends wait for acme in the store, unacknowledged.
      await eventually(
        async () => (await own.notifications.count({ sessionPrefix: 'acme/', status: 'queued' })) === 2,
        'the notifications are kept',
      );
      clock.increment(1_000);
      const refused = await post(A);
      expect(refused.statusCode).toBe(429);
      expect(refused.headers['retry-after']).toBe('5');
      expect(refused.json()).toMatchObject({ error: { code: 'quota_exceeded' } });
      expect((await post(B)).statusCode).toBe(200);
      const [first] = (
        await kept.inject({
          url: '/v1/notifications?status=queued',
          headers: { authorization: `Bearer ${A}` },
        })
      ).json() as Array<{ id: string }>;
      await kept.inject({
        method: 'POST',
        url: `/v1/notifications/${first?.id}/ack`,
        headers: { authorization: `Bearer ${A}` },
        payload: {},
      });
      clock.increment(1_000);
      expect((await post(A)).statusCode).toBe(200);
    } finally {
      await kept.close();
      await own.close();
    }
  });
});
