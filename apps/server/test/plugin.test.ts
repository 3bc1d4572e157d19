import SwaggerParser from '@apidevtools/swagger-parser';
import { createRuntime } from '@baton/runtime';
import { SimulatedClock } from '@baton/runtime/testing';
import Fastify from 'fastify';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { demoTools } from '../src/demo-tools.js';
import { batonPlugin, createServer } from '../src/index.js';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function demoRuntime() {
  const runtime = createRuntime({ tools: demoTools, clock: new SimulatedClock() });
  cleanups.push(() => runtime.close());
  await runtime.ready;
  return runtime;
}

const TOKEN = 'a-token-of-sixteen-characters';

describe('batonPlugin in an app you already have', () => {
  it('serves the API under a prefix, with its tokens, and leaves the rest of the app alone', async () => {
    const runtime = await demoRuntime();
    const app = Fastify();
    cleanups.push(() => app.close());
    app.get('/hello', async () => ({ hello: 'world' }));
    await app.register(batonPlugin, { runtime, prefix: '/baton', tokens: { [TOKEN]: 'acme' } });

    // The app's own route: no token asked, Baton's hooks do not reach it.
    expect((await app.inject('/hello')).json()).toEqual({ hello: 'world' });
    // Baton's public routes stay public under the prefix; the others want the token.
    expect((await app.inject('/baton/healthz')).statusCode).toBe(200);
    expect((await app.inject('/baton/openapi.json')).statusCode).toBe(200);
    expect((await app.inject('/baton/v1/calls')).statusCode).toBe(401);
    const call = await app.inject({
      method: 'POST',
      url: '/baton/v1/calls',
      headers: { authorization: `Bearer ${TOKEN}` },
      payload: { name: 'echo', args: { text: 'mounted' }, sessionId: 's' },
    });
    expect(call.json()).toMatchObject({ status: 'succeeded', output: { text: 'mounted' } });
    expect((await app.inject('/baton/inspector')).headers.location).toBe('/baton/inspector/');
    // A path under the prefix that is no route answers in the API's format.
    expect(
      (await app.inject({ url: '/baton/nope', headers: { authorization: `Bearer ${TOKEN}` } })).json(),
    ).toEqual({ error: { code: 'not_found', message: 'no route GET /baton/nope' } });
  });
});

describe('createServer', () => {
  it('logs one line per request at info, with its method, URL, status and time', async () => {
    const runtime = await demoRuntime();
    const lines: Array<Record<string, unknown>> = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) });
    const app = createServer({ runtime, logger });
    cleanups.push(() => app.close());
    await app.inject({
      method: 'POST',
      url: '/v1/calls',
      payload: { name: 'echo', args: { text: 'x' }, sessionId: 's' },
    });
    await app.inject('/v1/calls/nope');
    const requests = lines.filter((line) => line.msg === 'request');
    expect(requests).toEqual([
      expect.objectContaining({
        level: 30,
        method: 'POST',
        url: '/v1/calls',
        status: 200,
        ms: expect.any(Number),
      }),
      expect.objectContaining({ level: 30, method: 'GET', url: '/v1/calls/nope', status: 404 }),
    ]);
    // Fastify's own two lines per request are off.
    expect(lines.filter((line) => line.msg === 'incoming request')).toEqual([]);
  });
});

describe("a call's event stream", () => {
  it('names each event by its type, ends after the terminal event of an inline call, and answers 204 after its end', async () => {
    const runtime = await demoRuntime();
    const app = createServer({ runtime });
    cleanups.push(() => app.close());
    await app.inject({
      method: 'POST',
      url: '/v1/calls',
      payload: { name: 'echo', args: { text: 'x' }, sessionId: 's', callId: 'c1' },
    });
    // inject() resolves only once the response ends: the stream ended by itself.
    const stream = await app.inject('/v1/calls/c1/events');
    expect(stream.headers['content-type']).toMatch(/^text\/event-stream/);
    const messages = stream.body.split('\n\n').filter((block) => block.includes('data: '));
    expect(messages.map((block) => /^event: (.*)$/m.exec(block)?.[1])).toEqual([
      'queued',
      'started',
      'succeeded',
    ]);
    expect(
      (await app.inject({ url: '/v1/calls/c1/events', headers: { 'last-event-id': '3' } })).statusCode,
    ).toBe(204);
  });
});

describe('the OpenAPI document', () => {
  it('asks no token of the public routes, and describes the MCP endpoint', async () => {
    const runtime = await demoRuntime();
    const app = createServer({ runtime });
    cleanups.push(() => app.close());
    const document = (await app.inject('/openapi.json')).json() as {
      security: unknown[];
      paths: Record<string, Record<string, { security?: unknown[]; responses: Record<string, unknown> }>>;
    };
    expect(document.security).toEqual([{ bearer: [] }]);
    for (const path of ['/healthz', '/openapi.json']) {
      expect(document.paths[path]?.get?.security).toEqual([]);
      expect(document.paths[path]?.get?.responses).not.toHaveProperty('401');
    }
    expect(document.paths['/v1/calls']?.post?.security).toBeUndefined();
    expect(Object.keys(document.paths['/mcp'] ?? {}).sort()).toEqual(['delete', 'get', 'post']);
  });

  it('is valid OpenAPI 3.0, made by @fastify/swagger from the route schemas, answers included', async () => {
    const runtime = await demoRuntime();
    // With tokens, the document names no tool (anyone may read it): a call is a CallRequest.
    const authenticated = createServer({ runtime, tokens: { 'a-secret-token-0001': 'team' } });
    cleanups.push(() => authenticated.close());
    const withTokens = (await authenticated.inject('/openapi.json')).json();
    await SwaggerParser.validate(structuredClone(withTokens));
    expect(withTokens.components.schemas.ToolCall).toEqual({ $ref: '#/components/schemas/CallRequest' });
    const app = createServer({ runtime });
    cleanups.push(() => app.close());
    const document = (await app.inject('/openapi.json')).json();
    // The validator dereferences in place: it gets a copy.
    await SwaggerParser.validate(structuredClone(document));
    const createCall = document.paths['/v1/calls'].post;
    expect(createCall.operationId).toBe('createCall');
    const schemas = document.components.schemas;
    const named = (where: { content: Record<string, { schema: { $ref?: string } }> }) =>
      schemas[(where.content['application/json']?.schema.$ref ?? '').replace('#/components/schemas/', '')];
    // The body is one of the server's tools, each call with that tool's own arguments.
    const call = named(createCall.requestBody);
    expect(call.discriminator.propertyName).toBe('name');
    expect(Object.keys(call.discriminator.mapping)).toEqual([
      'echo',
      'slow_report',
      'always_fails',
      'has_a_bug',
      'deploy',
    ]);
    const echo = schemas['ToolCall.echo'];
    expect(echo.required).toEqual(['name', 'sessionId']);
    expect(echo.properties.name.enum).toEqual(['echo']);
    expect(echo.properties.args).toMatchObject({ type: 'object', required: ['text'] });
    // The answers are named schemas: a generated client gets CallReply, CallRecord, ApiError...
    const reply = named(createCall.responses['200']);
    expect(reply).toBe(schemas.CallReply);
    expect(reply.required).toEqual(['callId', 'status', 'output']);
    expect(reply.properties.status.enum).toContain('backgrounded');
    expect(reply.properties.error.allOf).toEqual([{ $ref: '#/components/schemas/CallError' }]);
    expect(named(createCall.responses['400'])).toBe(schemas.ApiError);
    expect(schemas.CallPage.properties.calls.items.$ref).toBe('#/components/schemas/CallRecord');
    const listCalls = document.paths['/v1/calls'].get;
    expect(listCalls.parameters.map((parameter: { name: string }) => parameter.name)).toContain('cursor');
    expect(document.paths['/v1/calls/{id}/events'].get.responses['200'].content).toHaveProperty(
      'text/event-stream',
    );
  });

  it('is drawn at /docs, which asks no token', async () => {
    const runtime = await demoRuntime();
    const app = createServer({ runtime, tokens: { secret: 'team' } });
    cleanups.push(() => app.close());
    const page = await app.inject('/docs/');
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toContain('text/html');
    expect(page.body).toContain('swagger-ui');
    const spec = await app.inject('/docs/json');
    expect(spec.json().paths).toHaveProperty('/v1/calls');
    expect((await app.inject('/v1/calls')).statusCode).toBe(401);
  });
});
