import { TaskState } from '@a2a-js/sdk';
import { skillMessage } from '@baton/a2a';
import { defineTool } from '@baton/contracts';
import { createRuntime, type Runtime } from '@baton/runtime';
import { deferred, SimulatedClock } from '@baton/runtime/testing';
import { ClientCredentialsProvider } from '@modelcontextprotocol/sdk/client/auth-extensions.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { demoTools } from '../src/demo-tools.js';
import { createServer } from '../src/server.js';
import { a2aClientOf, sendTo } from './a2a-client.js';
import {
  CLIENT_ID,
  CLIENT_SECRET,
  forged,
  freePort,
  SCOPE,
  signingKey,
  startIssuer,
} from './oauth-issuer.js';

/** A static token of the OAuth client's own tenant: it holds every scope. */
const AGENT_STATIC = 'a-static-token-of-agent-one-01';

let runtime: Runtime;
const researched = deferred<string>();
let app: FastifyInstance;
let base: string;
let resource: string;
let issuer: Awaited<ReturnType<typeof startIssuer>>;
let first: Awaited<ReturnType<typeof signingKey>>;

beforeAll(async () => {
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  resource = `${base}/`;
  first = await signingKey('key-1');
  issuer = await startIssuer(resource, [first.jwk]);
  const launch = defineTool({
    name: 'launch',
    description: 'Launches something: only for tokens that hold the scope launch',
    scope: 'launch',
    input: z.object({}),
    execute: () => 'launched',
  });
  const research = defineTool({
    name: 'research',
    description: 'Researches a topic; takes minutes',
    input: z.object({ topic: z.string() }),
    execution: { mode: 'auto' },
    execute: () => researched.promise,
  });
  runtime = createRuntime({ tools: [...demoTools, launch, research], clock: new SimulatedClock() });
  await runtime.ready;
  app = createServer({
    runtime,
    tokens: { 'a-static-token-of-acme-01': 'acme', [AGENT_STATIC]: CLIENT_ID },
    oauth: {
      issuer: issuer.issuer,
      resource,
      tenantClaim: 'client_id',
      scopes: [SCOPE],
      keysCooldownMs: 0,
      toolScopes: { echo: SCOPE, deploy: 'deploy' },
    },
  });
  await app.listen({ host: '127.0.0.1', port });
}, 30_000);

afterAll(async () => {
  await app.close();
  await runtime.close();
  await issuer.close();
});

const call = (authorization?: string, name = 'echo', args: object = { text: 'tide' }) =>
  fetch(`${base}/v1/calls`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
    body: JSON.stringify({ name, args, sessionId: 's' }),
  });

const toolNames = async (authorization: string) =>
  (
    (await (await fetch(`${base}/v1/tools`, { headers: { authorization } })).json()) as Array<{
      name: string;
    }>
  ).map((tool) => tool.name);

const METADATA = () => `${base}/.well-known/oauth-protected-resource`;

describe('the server as an OAuth 2.1 resource server, against a real authorization server (oidc-provider)', () => {
  it('publishes its Protected Resource Metadata (RFC 9728), at the well-known name and under a path', async () => {
    for (const url of [METADATA(), `${METADATA()}/mcp`]) {
      const response = await fetch(url);
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({
        resource,
        authorization_servers: [issuer.issuer],
        bearer_methods_supported: ['header'],
        scopes_supported: [SCOPE],
      });
    }
  });

  it('answers a request without a token 401, naming its metadata', async () => {
    const response = await call();
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${METADATA()}"`);
  });

  it('takes an access token the issuer made for it: the client is the tenant, its calls its own', async () => {
    const token = await issuer.token();
    const response = await call(`Bearer ${token}`);
    expect(response.status).toBe(200);
    const { callId } = (await response.json()) as { callId: string };
    expect((await runtime.get(`${CLIENT_ID}/${callId}`))?.toolName).toBe('echo');
    // A static token's tenant does not see it.
    const other = await fetch(`${base}/v1/calls/${callId}`, {
      headers: { authorization: 'Bearer a-static-token-of-acme-01' },
    });
    expect(other.status).toBe(404);
  });

  it.each([
    [
      'issued for another audience',
      () => forged(first.privateKey, 'key-1', { iss: issuer.issuer, aud: 'http://other.example/' }),
      /aud/,
    ],
    [
      'expired',
      () =>
        forged(first.privateKey, 'key-1', {
          iss: issuer.issuer,
          aud: resource,
          exp: Math.floor(Date.now() / 1000) - 3_600,
        }),
      /expired/,
    ],
    [
      'from another issuer',
      () => forged(first.privateKey, 'key-1', { iss: 'http://127.0.0.1:1', aud: resource }),
      /iss/,
    ],
    [
      'signed by a key the issuer does not have',
      async () =>
        forged((await signingKey('key-x')).privateKey, 'key-x', { iss: issuer.issuer, aud: resource }),
      /not signed by one of the issuer's keys/,
    ],
    [
      'unsigned (alg none)',
      async () => {
        const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
        const now = Math.floor(Date.now() / 1000);
        return `${encode({ alg: 'none', typ: 'at+jwt' })}.${encode({ iss: issuer.issuer, aud: resource, client_id: CLIENT_ID, exp: now + 300 })}.`;
      },
      /./,
    ],
  ])('refuses a token %s with 401 and invalid_token', async (_what, tokenOf, described) => {
    const response = await call(`Bearer ${await tokenOf()}`);
    expect(response.status).toBe(401);
    const challenge = response.headers.get('www-authenticate') ?? '';
    expect(challenge).toContain(`resource_metadata="${METADATA()}"`);
    expect(challenge).toContain('error="invalid_token"');
    expect(((await response.json()) as { error: { message: string } }).error.message).toMatch(described);
  });

  it('picks up a rotated signing key without a restart', async () => {
    const second = await signingKey('key-2');
    issuer.rotate([second.jwk, first.jwk]);
    const token = await forged(second.privateKey, 'key-2', { iss: issuer.issuer, aud: resource });
    expect((await call(`Bearer ${token}`)).status).toBe(200);
  });

  it('lets the MCP SDK client’s own OAuth flow (client credentials) reach /mcp, list and call the tools its scopes allow, and get a background result', async () => {
    const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
      authProvider: new ClientCredentialsProvider({
        clientId: CLIENT_ID,
        clientSecret: CLIENT_SECRET,
        scope: SCOPE,
        expectedIssuer: issuer.issuer,
      }),
    });
    const client = new Client({ name: 'oauth-test', version: '1.0.0' });
    await client.connect(transport);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toContain('echo');
      expect(tools.map((tool) => tool.name)).not.toContain('launch');
      const result = await client.callTool({ name: 'echo', arguments: { text: 'tide' } });
      expect(result.isError).not.toBe(true);
      // A call that goes on in the background, as a task: its result comes to the same client.
      const { task } = await client.request(
        { method: 'tools/call', params: { name: 'research', arguments: { topic: 'tides' } } },
        CreateTaskResultSchema,
        { task: { ttl: 60_000 } },
      );
      expect(task.status).toBe('working');
      researched.resolve('tides: high at noon');
      expect(await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema)).toMatchObject({
        content: [{ type: 'text', text: 'tides: high at noon' }],
      });
      // A tool its token lacks the scope of: 403 insufficient_scope, which the client tries to step
      // up from, and the issuer (which grants this client no such scope) does not let it.
      await expect(client.callTool({ name: 'launch', arguments: {} })).rejects.toThrow();
      expect((await runtime.list({ toolName: 'launch' })).calls).toEqual([]);
    } finally {
      await client.close();
    }
  });

  it('shows a token only the tools its scopes allow, and refuses a call of another 403 insufficient_scope, naming the scope', async () => {
    const bearer = `Bearer ${await issuer.token()}`;
    const seen = await toolNames(bearer);
    expect(seen).toContain('echo');
    expect(seen).not.toContain('launch');
    expect(seen).not.toContain('deploy');
    const refused = await call(bearer, 'launch', {});
    expect(refused.status).toBe(403);
    expect(refused.headers.get('www-authenticate')).toBe(
      `Bearer error="insufficient_scope", scope="launch", resource_metadata="${METADATA()}"`,
    );
    expect(((await refused.json()) as { error: object }).error).toMatchObject({
      code: 'insufficient_scope',
      scope: 'launch',
    });
    expect((await runtime.list({ toolName: 'launch' })).calls).toEqual([]);
    // A static token holds every scope.
    const staticToken = 'Bearer a-static-token-of-acme-01';
    expect(await toolNames(staticToken)).toContain('launch');
    expect(((await (await call(staticToken, 'launch', {})).json()) as { output: string }).output).toBe(
      'launched',
    );
  });

  it('shows an A2A caller the skills its scopes allow, and rejects a task of another, naming the scope', async () => {
    const a2a = await a2aClientOf(base, await issuer.token());
    const skills = (await a2a.getAgentCard()).skills.map((skill) => skill.id);
    expect(skills).toContain('echo');
    expect(skills).not.toContain('launch');
    expect(skills).not.toContain('deploy');
    const echoed = await sendTo(a2a, skillMessage('echo', { text: 'tide' }));
    expect(echoed.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const refused = await sendTo(a2a, skillMessage('launch', {}));
    expect(refused.status?.state).toBe(TaskState.TASK_STATE_REJECTED);
    expect(JSON.stringify(refused.status?.message)).toContain('calling launch needs the scope launch');
    const launches = (await runtime.list({ toolName: 'launch' })).calls;
    expect(launches.filter((launch) => launch.callId.startsWith(`${CLIENT_ID}/`))).toEqual([]);
  });

  it('lets only a token that holds a tool’s scope approve its call: deciding is running', async () => {
    const staticToken = `Bearer ${AGENT_STATIC}`;
    const made = await call(staticToken, 'deploy', { env: 'staging' });
    const { callId } = (await made.json()) as { callId: string };
    const decide = (authorization: string) =>
      fetch(`${base}/v1/calls/${callId}/approve`, {
        method: 'POST',
        headers: { authorization, 'content-type': 'application/json' },
        body: '{}',
      });
    const refused = await decide(`Bearer ${await issuer.token()}`);
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { error: object }).error).toMatchObject({
      code: 'insufficient_scope',
      scope: 'deploy',
    });
    expect((await runtime.get(`${CLIENT_ID}/${callId}`))?.approval).toBe('pending');
    expect(await (await decide(staticToken)).json()).toEqual({ approved: true });
  });
});
