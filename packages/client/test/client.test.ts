import type { CallEvent } from '@baton/contracts';
import { createRuntime, type Runtime } from '@baton/runtime';
import { createServer } from '@baton/server';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { BatonClientError, createClient, isBatonClientError } from '../src/index.js';
import type * as toolsModule from './tools.js';
import { gate, gates, tools } from './tools.js';

let runtime: Runtime;
let app: FastifyInstance;
let baseUrl: string;

beforeAll(async () => {
  runtime = createRuntime({ tools: [...tools] });
  await runtime.ready;
  app = createServer({ runtime, tokens: { 'token-a': 'a', 'token-b': 'b' } });
  baseUrl = await app.listen({ port: 0, host: '127.0.0.1' });
});

afterAll(async () => {
  await app.close();
  await runtime.close();
});

async function collect(events: AsyncIterable<CallEvent>, each: (event: CallEvent) => void = () => {}) {
  const seen: CallEvent[] = [];
  for await (const event of events) {
    seen.push(event);
    each(event);
  }
  return seen;
}

describe('the REST client', () => {
  it('calls a tool and gets its typed output inline', async () => {
    const client = createClient<typeof tools>({ baseUrl, token: 'token-a' });
    // `b` has a default: a caller may leave it out.
    const reply = await client.call({ name: 'add', args: { a: 2 }, sessionId: 's1' });
    expect(reply).toMatchObject({ status: 'succeeded', output: { sum: 3 } });
    if (reply.status === 'succeeded') expectTypeOf(reply.output).toEqualTypeOf<{ sum: number }>();
    const record = await client.get(reply.callId);
    expect(record).toMatchObject({ callId: reply.callId, toolName: 'add', status: 'succeeded' });
    expect(await client.list({ sessionId: 's1' })).toMatchObject({ calls: [{ callId: reply.callId }] });
  });

  it("follows a backgrounded call to its end and its notification, and reads the session's notifications", async () => {
    const client = createClient<typeof toolsModule>({ baseUrl, token: 'token-a' });
    gates.set('tides', gate());
    const reply = await client.call({ name: 'slow_report', args: { topic: 'tides' }, sessionId: 's2' });
    expect(reply.status).toBe('backgrounded');
    const events = await collect(client.follow(reply.callId), (event) => {
      if (event.type === 'progress') gates.get('tides')?.open();
    });
    const types = events.map((event) => event.type);
    expect(types[0]).toBe('queued');
    expect(types).toContain('progress');
    expect(types.slice(-2)).toEqual(['succeeded', 'notification']);
    expect(events.map((event) => event.seq)).toEqual(events.map((_, i) => i + 1));
    const [notification] = await client.notifications.list({ sessionId: 's2' });
    expect(notification).toMatchObject({ callId: reply.callId, outcome: 'succeeded', status: 'queued' });
    expect(await client.notifications.ack(notification?.id ?? '')).toBe(true);
    expect(await client.notifications.ack(notification?.id ?? '')).toBe(false);
  });

  it('takes a dropped stream up again from the last event, missing and repeating none', async () => {
    const connections: (string | null)[] = [];
    const counting: typeof fetch = (input, init) => {
      const lastEventId = new Headers(init?.headers).get('last-event-id');
      if (String(input).endsWith('/events')) connections.push(lastEventId);
      return fetch(input, init);
    };
    const client = createClient<typeof tools>({ baseUrl, token: 'token-a', fetch: counting });
    gates.set('drops', gate());
    const { callId } = await client.call({ name: 'slow_report', args: { topic: 'drops' }, sessionId: 's3' });
    let dropped = false;
    const events = await collect(client.follow(callId, { reconnectDelayMs: 10 }), (event) => {
      if (event.type !== 'progress' || dropped) return;
      dropped = true;
      // Every connection of the server is cut, this stream's too; the call goes on.
      app.server.closeAllConnections();
      setTimeout(() => gates.get('drops')?.open(), 50);
    });
    expect(dropped).toBe(true);
    const progressAt = events.find((event) => event.type === 'progress')?.seq;
    expect(connections.slice(0, 2)).toEqual(['0', String(progressAt)]);
    expect(events.map((event) => event.seq)).toEqual(events.map((_, i) => i + 1));
    expect(events.map((event) => event.type).slice(-2)).toEqual(['succeeded', 'notification']);
  });

  it('follows from after an event it was given, and ends at once for a call that ended', async () => {
    const client = createClient<typeof tools>({ baseUrl, token: 'token-a' });
    const { callId } = await client.call({ name: 'add', args: { a: 1, b: 1 }, sessionId: 's4' });
    const all = await collect(client.follow(callId));
    expect(all.at(-1)?.type).toBe('succeeded');
    expect(await collect(client.follow(callId, { after: 1 }))).toEqual(all.slice(1));
    expect(await collect(client.follow(callId, { after: all.length }))).toEqual([]);
  });

  it('cancels a running call: the follower sees it cancelled, and its notification', async () => {
    const client = createClient<typeof tools>({ baseUrl, token: 'token-a' });
    gates.set('forever', gate());
    const { callId } = await client.call({
      name: 'slow_report',
      args: { topic: 'forever' },
      sessionId: 's5',
    });
    const events = collect(client.follow(callId), (event) => {
      if (event.type === 'progress')
        client.cancel(callId).catch((error: unknown) => expect(error).toBeUndefined());
    });
    expect((await events).map((event) => event.type).slice(-2)).toEqual(['cancelled', 'notification']);
    expect(await client.get(callId)).toMatchObject({ status: 'cancelled' });
    expect(await client.cancel(callId)).toBe(false);
  });

  it('steers a running call: each message is numbered once stored, and a refusal keeps its code', async () => {
    const client = createClient<typeof tools>({ baseUrl, token: 'token-a' });
    const { callId } = await client.call({ name: 'notes', args: {}, sessionId: 's9' });
    expect(await client.steer(callId, 'tides')).toEqual({ callId, messageSeq: 1 });
    expect(await client.steer(callId, 'done')).toEqual({ callId, messageSeq: 2 });
    const events = await collect(client.follow(callId));
    expect(events.find((event) => event.type === 'succeeded')).toMatchObject({ output: ['tides'] });
    await expect(client.steer(callId, 'more')).rejects.toMatchObject({ code: 'call_ended', status: 409 });
    const other = createClient<typeof tools>({ baseUrl, token: 'token-b' });
    await expect(other.steer(callId, 'more')).rejects.toMatchObject({ code: 'not_found', status: 404 });
  });

  it("keeps a tenant's calls from another: not found for one, the call for its own", async () => {
    const a = createClient<typeof tools>({ baseUrl, token: 'token-a' });
    const b = createClient<typeof tools>({ baseUrl, token: 'token-b' });
    const { callId } = await a.call({ name: 'add', args: { a: 1 }, sessionId: 's6' });
    expect(await b.get(callId)).toBeUndefined();
    await expect(collect(b.follow(callId))).rejects.toMatchObject({ code: 'not_found', status: 404 });
    expect(await a.get(callId)).toMatchObject({ callId });
  });

  it('throws one error class with the server code, status and issues of a refusal', async () => {
    const untyped = createClient({ baseUrl, token: 'token-a' });
    const refused = await untyped
      .call({ name: 'add', args: {}, sessionId: '' })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(BatonClientError);
    expect(refused).toMatchObject({ code: 'invalid_request', status: 400 });
    expect((refused as BatonClientError).issues.map((issue) => issue.path)).toContain('sessionId');

    const stranger = createClient({ baseUrl, token: 'not-a-token' });
    await expect(stranger.list()).rejects.toMatchObject({ code: 'unauthorized', status: 401 });

    const nobody = createClient({ baseUrl: 'http://127.0.0.1:9' });
    const unreachable = await nobody.list().catch((error: unknown) => error);
    expect(isBatonClientError(unreachable, 'network_error')).toBe(true);
  });

  it("runs a call that fails as a reply, not an error: the tool's message for the model", async () => {
    const client = createClient<typeof tools>({ baseUrl, token: 'token-a' });
    const reply = await client.call({
      name: 'add',
      args: { a: 'one' as unknown as number },
      sessionId: 's7',
    });
    expect(reply).toMatchObject({ status: 'failed', error: { code: 'invalid_arguments' } });
  });

  it('lists the tools in a provider format', async () => {
    const client = createClient({ baseUrl, token: 'token-a' });
    expect((await client.tools()).map((tool) => tool.name)).toEqual(['add', 'slow_report', 'notes']);
    const openai = (await client.tools('openai')) as { function?: { name?: string } }[];
    expect(openai.map((tool) => tool.function?.name)).toEqual(['add', 'slow_report', 'notes']);
  });
});

describe('the types of a client made with the tools', () => {
  it('checks names and arguments at compile time, and gives each tool its output', () => {
    const client = createClient<typeof tools>({ baseUrl: 'http://localhost:8787' });
    // Compiled by `tsc` (the package's typecheck), never sent.
    const compileOnly = (run: boolean) => {
      if (!run) return;
      // @ts-expect-error: no tool of that name
      void client.call({ name: 'subtract', args: { a: 1 }, sessionId: 's' });
      // @ts-expect-error: `a` must be a number
      void client.call({ name: 'add', args: { a: '1' }, sessionId: 's' });
      // @ts-expect-error: slow_report takes a topic
      void client.call({ name: 'slow_report', args: { a: 1 }, sessionId: 's' });
      void client.call({ name: 'slow_report', args: { topic: 'x' }, sessionId: 's' });
    };
    compileOnly(false);
    const fromModule = createClient<typeof toolsModule>({ baseUrl: 'http://localhost:8787' });
    type ModuleCall = Parameters<typeof fromModule.call>[0];
    expectTypeOf<ModuleCall['name']>().toEqualTypeOf<'add' | 'slow_report' | 'notes'>();
    const untyped = createClient({ baseUrl: 'http://localhost:8787' });
    expectTypeOf<Parameters<typeof untyped.call>[0]['name']>().toEqualTypeOf<string>();
  });
});
