import { defineTool, ToolError } from '@baton/contracts';
import { createRuntime, type Runtime } from '@baton/runtime';
import { SimulatedClock } from '@baton/runtime/testing';
import { memoryStore } from '@baton/store';
import type { FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { demoTools } from '../src/demo-tools.js';
import { createServer } from '../src/server.js';

let runtime: Runtime;
let app: FastifyInstance;

beforeEach(async () => {
  runtime = createRuntime({ tools: demoTools, clock: new SimulatedClock() });
  await runtime.ready;
  app = createServer({ runtime });
});

afterEach(async () => {
  await app.close();
  await runtime.close();
});

const post = (url: string, payload?: object) => app.inject({ method: 'POST', url, payload: payload ?? {} });

describe('the HTTP API', () => {
  it('runs a fast call and shows its record', async () => {
    const reply = await post('/v1/calls', {
      name: 'echo',
      args: { text: 'hi' },
      sessionId: 's1',
      callId: 'c1',
    });
    expect(reply.statusCode).toBe(200);
    expect(reply.json()).toEqual({ callId: 'c1', status: 'succeeded', output: { text: 'hi' } });
    expect((await app.inject('/v1/calls/c1')).json()).toMatchObject({ callId: 'c1', status: 'succeeded' });
    expect((await app.inject('/v1/calls?sessionId=s1')).json().calls).toHaveLength(1);
  });

  it('returns the same call for the same callId', async () => {
    const first = await post('/v1/calls', {
      name: 'echo',
      args: { text: 'a' },
      sessionId: 's',
      callId: 'same',
    });
    const second = await post('/v1/calls', {
      name: 'echo',
      args: { text: 'b' },
      sessionId: 's',
      callId: 'same',
    });
    expect(second.json()).toEqual(first.json());
  });

  it('answers a tool failure as a reply, and a bad request with 400 naming each problem', async () => {
    expect((await post('/v1/calls', { name: 'always_fails', sessionId: 's' })).json().error).toEqual({
      code: 'tool_error',
      message: 'this tool always fails',
    });
    const bad = await post('/v1/calls', { name: '', args: {} });
    expect(bad.statusCode).toBe(400);
    expect(
      bad
        .json()
        .error.issues.map((issue: { path: string }) => issue.path)
        .sort(),
    ).toEqual(['name', 'sessionId']);
    expect((await app.inject('/v1/calls?status=sleeping')).statusCode).toBe(400);
  });

  it("says what a first request got wrong: the arguments under MCP's word, an empty tool name", async () => {
    const issuesOf = async (body: object) => {
      const reply = await post('/v1/calls', body);
      expect(reply.statusCode).toBe(400);
      return reply.json().error.issues as Array<{ path: string; message: string }>;
    };
    expect(await issuesOf({ name: 'echo', arguments: { text: 'hi' }, sessionId: 's' })).toEqual([
      {
        path: 'arguments',
        message: 'Baton takes the tool\'s arguments as "args" (MCP calls them "arguments"): rename the field',
      },
    ]);
    expect(await issuesOf({ name: '', args: {}, sessionId: 's' })).toEqual([
      { path: 'name', message: 'the tool name must not be empty: give the name of one of GET /v1/tools' },
    ]);
  });

  it('runs a call that needs approval once approved, and rejects another', async () => {
    const pending = await post('/v1/calls', {
      name: 'deploy',
      args: { env: 'staging' },
      sessionId: 's',
      callId: 'd1',
    });
    expect(pending.json()).toMatchObject({ status: 'backgrounded', output: { status: 'awaiting_approval' } });
    expect((await post('/v1/calls/d1/approve')).json()).toEqual({ approved: true });
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    // The record keeps what the caller was answered at once, beside the end.
    expect((await app.inject('/v1/calls/d1')).json()).toMatchObject({
      status: 'succeeded',
      acknowledgement: pending.json().output,
      result: { deployed: 'staging' },
    });
    const [notification] = (await app.inject('/v1/notifications?sessionId=s')).json();
    expect(notification.title).toBe('Task completed: Background tool: deploy');
    // The call's `notification` event names it: it is found by that id alone.
    expect((await app.inject(`/v1/notifications?id=${notification.id}`)).json()).toEqual([notification]);
    expect((await app.inject('/v1/notifications?id=unknown')).json()).toEqual([]);
    expect((await post(`/v1/notifications/${notification.id}/ack`)).json()).toEqual({ acknowledged: true });

    await post('/v1/calls', { name: 'deploy', args: { env: 'production' }, sessionId: 's', callId: 'd2' });
    expect((await post('/v1/calls/d2/reject', {})).statusCode).toBe(400);
    expect((await post('/v1/calls/d2/reject', { reason: 'freeze' })).json()).toEqual({ rejected: true });
    expect((await app.inject('/v1/calls/d2')).json().error.message).toBe(
      'The tool call was rejected: freeze',
    );
  });

  it('keeps the times a call asks to be told it still runs, and refuses times that are not', async () => {
    await post('/v1/calls', {
      name: 'deploy',
      args: { env: 'staging' },
      sessionId: 's',
      callId: 'n1',
      notifyAfterMs: [60_000, 10_000],
    });
    expect((await app.inject('/v1/calls/n1')).json().notifyAfterMs).toEqual([10_000, 60_000]);
    const refused = await post('/v1/calls', {
      name: 'echo',
      args: { text: 'x' },
      sessionId: 's',
      notifyAfterMs: 0,
    });
    expect([refused.statusCode, refused.json().error.code]).toEqual([400, 'invalid_request']);
  });

  it('cancels a call, and answers 404 for an unknown one', async () => {
    await post('/v1/calls', { name: 'deploy', args: { env: 'staging' }, sessionId: 's', callId: 'd1' });
    expect((await post('/v1/calls/d1/cancel')).json()).toEqual({ cancelled: true });
    expect((await app.inject('/v1/calls/d1')).json().status).toBe('cancelled');
    expect((await post('/v1/calls/nope/cancel')).statusCode).toBe(404);
    expect((await app.inject('/v1/calls/nope')).statusCode).toBe(404);
    expect((await app.inject('/v1/nowhere')).statusCode).toBe(404);
  });

  it('lists the tools in each provider format', async () => {
    const mcp = (await app.inject('/v1/tools')).json();
    expect(mcp.find((tool: { name: string }) => tool.name === 'slow_report').execution).toEqual({
      taskSupport: 'optional',
    });
    expect((await app.inject('/v1/tools?format=openai')).json()[0]).toMatchObject({
      type: 'function',
      function: { name: 'echo' },
    });
    expect((await app.inject('/v1/tools?format=anthropic')).json()[0]).toHaveProperty('input_schema');
    expect((await app.inject('/v1/tools?format=gemini')).json()[1]).toMatchObject({
      name: 'slow_report',
      behavior: 'NON_BLOCKING',
    });
  });

  it('answers a body over 1 MiB with 413', async () => {
    const reply = await post('/v1/calls', {
      name: 'echo',
      args: { text: 'x'.repeat(1024 * 1024) },
      sessionId: 's',
    });
    expect(reply.statusCode).toBe(413);
  });
});

describe('ids, odd URLs and odd bodies get the API error format', () => {
  const errorOf = (reply: { json(): { error: { code: string; message: string } } }) => reply.json().error;

  it('takes any id of up to 128 characters everywhere, and refuses a longer one with 400, never 414', async () => {
    const longest = 'é'.repeat(128);
    const created = await post('/v1/calls', {
      name: 'echo',
      args: { text: 'x' },
      sessionId: longest,
      callId: longest,
    });
    expect(created.json()).toMatchObject({ callId: longest, status: 'succeeded' });
    const path = `/v1/calls/${encodeURIComponent(longest)}`;
    expect((await app.inject(path)).json()).toMatchObject({ callId: longest, sessionId: longest });
    expect((await post(`${path}/cancel`)).json()).toEqual({ cancelled: false });

    const tooLong = 'x'.repeat(129);
    const refused = await post('/v1/calls', { name: 'echo', sessionId: 's', callId: tooLong });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().error.issues).toEqual([
      { path: 'callId', message: 'the id is 129 characters long, more than the limit of 128' },
    ]);
    for (const url of [
      `/v1/calls/${tooLong}`,
      `/v1/calls/${tooLong}/events`,
      `/v1/notifications/${tooLong}/ack`,
    ]) {
      const reply = await app.inject({
        method: url.endsWith('ack') ? 'POST' : 'GET',
        url,
        headers: { 'content-type': 'application/json' },
      });
      expect([reply.statusCode, errorOf(reply).code]).toEqual([400, 'invalid_request']);
    }
  });

  it('answers a path part longer than any id with 414 and a malformed %-escape with 400, in the API format', async () => {
    const long = await app.inject(`/v1/calls/${'x'.repeat(5_000)}`);
    expect([long.statusCode, errorOf(long)]).toEqual([
      414,
      { code: 'uri_too_long', message: 'a part of the path is longer than any id can be' },
    ]);
    const malformed = await app.inject('/v1/calls/%E0%A4%A');
    expect([malformed.statusCode, errorOf(malformed).code]).toEqual([400, 'invalid_request']);
  });

  it('refuses ids with a NUL or a lone surrogate, and drops __proto__ keys instead of calling the body "not valid JSON"', async () => {
    const nul = await app.inject('/v1/calls/a%00b');
    expect([nul.statusCode, errorOf(nul).code]).toEqual([400, 'invalid_request']);
    const lone = await post('/v1/calls', { name: 'echo', sessionId: '\uD800', args: { text: 'x' } });
    expect(lone.statusCode).toBe(400);
    const proto = await app.inject({
      method: 'POST',
      url: '/v1/calls',
      headers: { 'content-type': 'application/json' },
      payload: '{"name":"echo","sessionId":"s","args":{"text":"x","__proto__":{"polluted":true}}}',
    });
    expect(proto.json()).toMatchObject({ status: 'succeeded', output: { text: 'x' } });
    expect(({} as { polluted?: boolean }).polluted).toBeUndefined();
  });

  it('answers arguments no store can keep with invalid_arguments, naming where', async () => {
    const reply = await post('/v1/calls', { name: 'echo', sessionId: 's', args: { text: 'a\u0000b' } });
    expect(reply.json()).toMatchObject({
      status: 'failed',
      error: { code: 'invalid_arguments', issues: [{ path: 'text' }] },
    });
  });
});

describe('metrics', () => {
  it('label calls by registered tool names only: 1,000 made-up names add no series', async () => {
    await post('/v1/calls', { name: 'echo', args: { text: 'x' }, sessionId: 's' });
    await post('/v1/calls', { name: 'made_up_first', sessionId: 's' });
    const series = async () =>
      (await app.inject('/metrics')).body.split('\n').filter((line) => line.startsWith('baton_'));
    const before = await series();
    for (let i = 0; i < 1_000; i++)
      await post('/v1/calls', { name: `made_up_${i}_${'x'.repeat(100)}`, sessionId: 's' });
    const after = await series();
    expect(after.map((line) => line.split(' ')[0])).toEqual(before.map((line) => line.split(' ')[0]));
    expect(after).toContain('baton_calls_ended_total{status="failed",tool="(unregistered)"} 1001');
    expect(after).toContain('baton_calls_ended_total{status="succeeded",tool="echo"} 1');
    expect(after.join('\n')).not.toContain('made_up_');
  });

  it('count promotions, retries, calls waiting for approval, the failures the runtime handled, and the process', async () => {
    const clock = new SimulatedClock();
    let attempts = 0;
    const flaky = defineTool({
      name: 'flaky',
      description: 'fails once, then waits for the test',
      input: z.object({}),
      execution: { mode: 'auto', retry: { maxAttempts: 2, initialIntervalMs: 10 } },
      execute: () => {
        attempts++;
        if (attempts === 1) throw new ToolError('once', { retryable: true });
        return new Promise(() => {});
      },
    });
    const own = createRuntime({ tools: [...demoTools, flaky], clock, inlineBudgetMs: 100 });
    const server = createServer({ runtime: own });
    const call = server.inject({
      method: 'POST',
      url: '/v1/calls',
      payload: { name: 'flaky', sessionId: 's' },
    });
    await vi.waitFor(() => expect(attempts).toBe(1));
    clock.increment(10);
    await vi.waitFor(() => expect(attempts).toBe(2));
    clock.increment(100);
    expect((await call).json()).toMatchObject({ status: 'backgrounded' });
    const approval = { name: 'deploy', args: { env: 'staging' }, sessionId: 's', callId: 'd1' };
    await server.inject({ method: 'POST', url: '/v1/calls', payload: approval });
    const metrics = (await server.inject('/metrics')).body;
    expect(metrics).toContain('baton_promotions_total{tool="flaky"} 1');
    expect(metrics).toContain('baton_retries_total{tool="flaky"} 1');
    expect(metrics).toContain('baton_calls_awaiting_approval 1');
    expect(metrics).toContain('# TYPE baton_runtime_failures_total counter');
    expect(metrics).toMatch(/^process_cpu_user_seconds_total /m);
    expect(metrics).toMatch(/^nodejs_eventloop_lag_seconds /m);
    expect(
      (await server.inject({ method: 'POST', url: '/v1/calls/d1/approve', payload: {} })).json(),
    ).toEqual({
      approved: true,
    });
    // Approved, it starts: it waits no more once its `started` event is stored.
    await vi.waitFor(async () =>
      expect((await server.inject('/metrics')).body).toContain('baton_calls_awaiting_approval 0'),
    );
    await server.close();
    await own.close();
  });
});

describe('store metrics', () => {
  it('time the store writes and count the notifications not yet acknowledged', async () => {
    const report = defineTool({
      name: 'report',
      description: 'runs in the background and ends at once',
      input: z.object({}),
      execution: { mode: 'background' },
      execute: () => 'done',
    });
    const own = createRuntime({ tools: [report] });
    const server = createServer({ runtime: own });
    const pending = async () =>
      Number(/^baton_notifications_pending (\d+)$/m.exec((await server.inject('/metrics')).body)?.[1]);
    expect(await pending()).toBe(0);
    const call = await server.inject({
      method: 'POST',
      url: '/v1/calls',
      payload: { name: 'report', sessionId: 's' },
    });
    expect(call.json()).toMatchObject({ status: 'backgrounded' });
    await vi.waitFor(async () => expect(await pending()).toBe(1));
    const [notification] = (await server.inject('/v1/notifications?sessionId=s')).json();
    const ack = { method: 'POST' as const, url: `/v1/notifications/${notification.id}/ack`, payload: {} };
    expect((await server.inject(ack)).json()).toEqual({ acknowledged: true });
    expect(await pending()).toBe(0);
    const metrics = (await server.inject('/metrics')).body;
    const written = /^baton_store_write_duration_seconds_count\{outcome="written"\} (\d+)$/m.exec(metrics);
    expect(Number(written?.[1])).toBeGreaterThan(0);
    await server.close();
    await own.close();
  });
});

describe('paging', () => {
  it('refuses a cursor no page gave with 400, on every store alike', async () => {
    for (const cursor of ['abc', '1e309', '-1']) {
      const reply = await app.inject(`/v1/calls?cursor=${cursor}`);
      expect([reply.statusCode, reply.json().error.code]).toEqual([400, 'invalid_request']);
    }
    expect((await app.inject('/v1/calls?cursor=12')).statusCode).toBe(200);
  });
});

describe('notifications', () => {
  it('are listed a page at a time: 100 by default, then after the last one seen', async () => {
    const quick = defineTool({
      name: 'quick',
      description: 'q',
      input: z.object({}),
      execution: { mode: 'background' },
      execute: () => 'done',
    });
    const own = createRuntime({
      tools: [quick],
      clock: new SimulatedClock(),
      limits: { backgroundPerSession: 1_000, backgroundPerWorker: 1_000 },
    });
    const server = createServer({ runtime: own });
    // A notification's event is published once the notification is stored.
    let stored = 0;
    const allStored = new Promise<void>((resolve) =>
      own.events$.subscribe((event) => event.type === 'notification' && ++stored === 150 && resolve()),
    );
    for (let i = 0; i < 150; i++) await own.call({ name: 'quick', sessionId: 's' });
    await allStored;
    const first = (await server.inject('/v1/notifications')).json() as Array<{ id: string }>;
    expect(first).toHaveLength(100);
    const rest = (
      await server.inject(`/v1/notifications?after=${first[99]?.id}&limit=1000`)
    ).json() as Array<{
      id: string;
    }>;
    expect(rest).toHaveLength(50);
    expect(new Set([...first, ...rest].map((n) => n.id)).size).toBe(150);
    expect((await server.inject('/v1/notifications?limit=1001')).statusCode).toBe(400);
    await server.close();
    await own.close();
  });
});

describe('health', () => {
  it('is a 503 naming the fault when the store takes no write, and ok again once it does', async () => {
    const store = memoryStore();
    const own = createRuntime({ tools: demoTools, store, clock: new SimulatedClock() });
    await own.ready;
    const server = createServer({ runtime: own });
    const heartbeat = vi.spyOn(store, 'heartbeat').mockRejectedValue(new Error('disk I/O error'));
    const failing = await server.inject('/healthz');
    expect([failing.statusCode, failing.json().error]).toEqual([
      503,
      { code: 'store_unavailable', message: 'the store failed: disk I/O error' },
    ]);
    heartbeat.mockRestore();
    expect((await server.inject('/healthz')).statusCode).toBe(200);
    await server.close();
    await own.close();
  });
});
