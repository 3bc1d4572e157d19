import { skillMessage } from '@baton/a2a';
import { defineTool } from '@baton/contracts';
import { createRuntime, type Runtime } from '@baton/runtime';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { API } from '../src/api.js';
import { demoTools } from '../src/demo-tools.js';
import { createServer } from '../src/server.js';
import { tenantOfId, userSegmentOf } from '../src/tenancy.js';
import { a2aClientOf, sendTo } from './a2a-client.js';
import { forged, freePort, SCOPE, signingKey, startIssuer } from './oauth-issuer.js';

const TENANT_WIDE = 'baton:tenant';

let runtime: Runtime;
let app: FastifyInstance;
let base: string;
let issuer: Awaited<ReturnType<typeof startIssuer>>;
let tokenOf: (org: string, sub: string, scope?: string) => Promise<string>;

beforeAll(async () => {
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  const resource = `${base}/`;
  const key = await signingKey('key-1');
  issuer = await startIssuer(resource, [key.jwk]);
  // The users' tokens, as an identity provider that names an organisation and a user makes them.
  tokenOf = (org, sub, scope = SCOPE) =>
    forged(key.privateKey, 'key-1', { iss: issuer.issuer, aud: resource, org, sub, scope });
  const note = defineTool({
    name: 'note',
    description: 'Notes something, in the background: its end is a notification and a webhook delivery',
    input: z.object({ text: z.string() }),
    execution: { mode: 'background' },
    execute: ({ text }) => `noted ${text}`,
  });
  runtime = createRuntime({
    tools: [...demoTools, note],
    tenantOf: tenantOfId,
    webhooks: {
      endpoint: { url: 'http://127.0.0.1:9/hook', secret: `whsec_${Buffer.alloc(32, 7).toString('base64')}` },
      allow: { loopback: true },
      retryScheduleMs: [],
    },
  });
  await runtime.ready;
  app = createServer({
    runtime,
    oauth: {
      issuer: issuer.issuer,
      resource,
      tenantClaim: 'org',
      tenantScope: TENANT_WIDE,
      scopes: [SCOPE, TENANT_WIDE],
      keysCooldownMs: 0,
    },
  });
  await app.listen({ host: '127.0.0.1', port });
}, 30_000);

afterAll(async () => {
  for (const client of mcpClients) await client.close();
  await app.close();
  await runtime.close();
  await issuer.close();
});

const mcpClients: Client[] = [];
/** The MCP SDK's client, its requests carrying the token. */
async function mcpClientOf(token: string): Promise<Client> {
  const client = new Client({ name: 'oauth-users', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  mcpClients.push(client);
  return client;
}

const as = async (token: string, method: 'GET' | 'POST', url: string, payload?: object) =>
  app.inject({ method, url, headers: { authorization: `Bearer ${token}` }, ...(payload ? { payload } : {}) });

describe('two tenants and two users of one tenant, by OAuth tokens that name a user', () => {
  it('lets none reach another’s call, MCP or A2A task, notification or webhook delivery by id, on any route; the tenant scope sees them all', async () => {
    const alice = await tokenOf('acme', 'alice');
    const bob = await tokenOf('acme', 'bob');
    const carol = await tokenOf('bolt', 'carol');
    const admin = await tokenOf('acme', 'admin', `${SCOPE} ${TENANT_WIDE}`);

    const made = await as(alice, 'POST', '/v1/calls', {
      name: 'note',
      args: { text: 'a' },
      sessionId: 's',
      callId: 'a-1',
    });
    expect(made.json()).toMatchObject({ callId: 'a-1', status: 'backgrounded' });
    // Kept under her tenant and her user: `acme/~…/a-1`.
    expect((await runtime.wait(`acme/${userSegmentOf('alice')}a-1`))?.status).toBe('succeeded');
    const [notification] = (await as(alice, 'GET', '/v1/notifications')).json() as Array<{ id: string }>;
    const [delivery] = (await as(alice, 'GET', '/v1/webhooks/deliveries')).json() as Array<{ id: string }>;
    expect(notification?.id).toEqual(expect.any(String));
    expect(delivery?.id).toEqual(expect.any(String));
    const task = await sendTo(await a2aClientOf(base, alice), skillMessage('echo', { text: 'tide' }));
    const alicesMcp = await mcpClientOf(alice);
    const { task: mcpTask } = await alicesMcp.request(
      { method: 'tools/call', params: { name: 'note', arguments: { text: 'm' } } },
      CreateTaskResultSchema,
      { task: { ttl: 60_000 } },
    );
    expect((await alicesMcp.experimental.tasks.getTask(mcpTask.taskId)).taskId).toBe(mcpTask.taskId);

    // Alice reaches her own.
    expect((await as(alice, 'GET', '/v1/calls/a-1')).statusCode).toBe(200);
    expect((await as(alice, 'GET', `/v1/calls/${task.id}`)).statusCode).toBe(200);

    for (const other of [bob, carol]) {
      // Every route that names a call or a notification by id.
      for (const endpoint of Object.values(API)) {
        if (!endpoint.url.includes(':id') || endpoint.url.startsWith('/v1/sessions/')) continue;
        const id = endpoint.url.startsWith('/v1/notifications/') ? notification?.id : 'a-1';
        const payload = endpoint.method === 'POST' ? { message: 'x', reason: 'x' } : undefined;
        const answer = await as(
          other,
          endpoint.method as 'GET' | 'POST',
          endpoint.url.replace(':id', String(id)),
          payload,
        );
        expect([endpoint.url, answer.statusCode]).toEqual([endpoint.url, 404]);
      }
      // And every listing that finds one by id.
      expect((await as(other, 'GET', '/v1/calls?callId=a-1')).json()).toEqual({ calls: [] });
      expect((await as(other, 'GET', `/v1/notifications?id=${notification?.id}`)).json()).toEqual([]);
      expect((await as(other, 'GET', '/v1/webhooks/deliveries?callId=a-1')).json()).toEqual([]);
      expect((await as(other, 'GET', '/v1/webhooks/deliveries')).json()).toEqual([]);
      await expect((await a2aClientOf(base, other)).getTask({ tenant: '', id: task.id })).rejects.toThrow(
        /not found/i,
      );
      const othersMcp = await mcpClientOf(other);
      await expect(othersMcp.experimental.tasks.getTask(mcpTask.taskId)).rejects.toThrow(/Task not found/);
      expect((await othersMcp.experimental.tasks.listTasks()).tasks).toEqual([]);
    }

    // A token with the tenant scope sees the tenant's users' calls, each under its user's segment.
    const seen = (await as(admin, 'GET', '/v1/calls')).json() as { calls: Array<{ callId: string }> };
    const alicesCall = seen.calls.find((call) => call.callId.endsWith('/a-1'));
    expect(alicesCall?.callId).toMatch(/^~[A-Za-z0-9_-]{22}\/a-1$/);
    expect(
      (await as(admin, 'GET', `/v1/calls/${encodeURIComponent(alicesCall?.callId ?? '')}`)).statusCode,
    ).toBe(200);
    expect((await as(carol, 'GET', '/v1/calls')).json()).toEqual({ calls: [] });
  });
});
