import { defineTool } from '@baton/contracts';
import { createRuntime, type Runtime } from '@baton/runtime';
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { demoTools } from '../src/demo-tools.js';
import { createServer, type ServerOptions } from '../src/server.js';

const TOKEN = 'a-token-of-acme-0000001';
const authorization = `Bearer ${TOKEN}`;

const vault = defineTool({
  name: 'vault_export',
  description: 'Exports the vault: for tokens that hold vault:read',
  scope: 'vault:read',
  input: z.object({ what: z.string() }),
  execute: ({ what }) => `exported ${what}`,
});

const opened: Array<{ runtime: Runtime; app: FastifyInstance }> = [];
afterEach(async () => {
  for (const { runtime, app } of opened.splice(0)) {
    await app.close();
    await runtime.close();
  }
});

async function serve(options: Omit<ServerOptions, 'runtime'> = {}) {
  const runtime = createRuntime({ tools: [...demoTools, vault] });
  await runtime.ready;
  const app = createServer({ runtime, tokens: { [TOKEN]: 'acme' }, ...options });
  await app.ready();
  opened.push({ runtime, app });
  return app;
}

const a2aBody = (text: string) => ({
  jsonrpc: '2.0',
  id: 1,
  method: 'SendMessage',
  params: {
    message: {
      messageId: 'm-1',
      role: 'ROLE_USER',
      parts: [{ data: { skill: 'echo', arguments: { text } } }],
    },
  },
});

describe('every surface inside the server’s guards', () => {
  it('reads /a2a bodies under the server’s limits: never an HTML page or a stack', async () => {
    const app = await serve();
    // Over a socket: the A2A handler answers from the SDK's own (Express) response.
    await app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = app.server.address() as { port: number };
    const post = async (payload: string) => {
      const response = await fetch(`http://127.0.0.1:${port}/a2a`, {
        method: 'POST',
        headers: { authorization, 'content-type': 'application/json', 'a2a-version': '1.0' },
        body: payload,
      });
      const body = await response.text();
      return {
        statusCode: response.status,
        headers: { 'content-type': response.headers.get('content-type') ?? '' },
        body,
        json: () => JSON.parse(body) as unknown,
      };
    };
    // Past Express's 100 KB, within the server's 1 MiB: answered by the agent.
    const large = await post(JSON.stringify(a2aBody('x'.repeat(200_000))));
    expect(large.statusCode).toBe(200);
    expect(large.json()).toMatchObject({ jsonrpc: '2.0', id: 1 });
    expect(large.body).toContain('x'.repeat(1000));

    const deep = await post(`${'['.repeat(20_000)}${']'.repeat(20_000)}`);
    expect(deep.statusCode).toBe(413);
    expect(deep.json()).toMatchObject({ error: { code: 'payload_too_large' } });

    const malformed = await post('{"jsonrpc": "2.0", "method": ');
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json()).toMatchObject({ error: { code: 'invalid_request' } });

    const huge = await post(JSON.stringify(a2aBody('x'.repeat(2_000_000))));
    expect(huge.statusCode).toBe(413);
    for (const answer of [deep, malformed, huge]) {
      expect(answer.headers['content-type']).toMatch(/^application\/json/);
      expect(answer.body).not.toMatch(/<html|<pre>|node_modules|at [\w.]+ \(/i);
    }
  });

  it('names its configured URL in the agent card, never the Host a request names', async () => {
    const card = async (app: FastifyInstance, headers: Record<string, string>) =>
      (
        (
          await app.inject({ url: '/.well-known/agent-card.json', headers: { authorization, ...headers } })
        ).json() as {
          supportedInterfaces: Array<{ url: string }>;
        }
      ).supportedInterfaces[0]?.url;
    const configured = await serve({ publicUrl: 'https://baton.example' });
    expect(await card(configured, { host: 'attacker.example', 'x-forwarded-proto': 'http' })).toBe(
      'https://baton.example/a2a',
    );
    // Behind a proxy it trusts, the forwarded scheme and host; without that trust, never.
    const proxied = await serve({ trustProxy: true });
    expect(
      await card(proxied, {
        host: 'inner:8787',
        'x-forwarded-proto': 'https',
        'x-forwarded-host': 'baton.example',
      }),
    ).toBe('https://baton.example/a2a');
    const direct = await serve();
    expect(
      await card(direct, {
        host: 'inner:8787',
        'x-forwarded-proto': 'https',
        'x-forwarded-host': 'evil.example',
      }),
    ).toBe('http://inner:8787/a2a');
  });

  it('lists no tool in the OpenAPI document or the docs page when authentication is on; /v1/tools lists the caller’s', async () => {
    const app = await serve();
    for (const url of ['/openapi.json', '/docs/json']) {
      const document = await app.inject({ url });
      expect(document.statusCode).toBe(200);
      expect(document.body).not.toContain('vault_export');
      expect(document.body).not.toContain('echo');
    }
    const tools = await app.inject({ url: '/v1/tools', headers: { authorization } });
    expect(tools.body).toContain('vault_export');
  });

  it('sends security headers on the inspector and the API', async () => {
    const app = await serve();
    for (const [url, headers] of [
      ['/inspector/', {}],
      ['/v1/tools', { authorization }],
      ['/healthz', {}],
    ] as const) {
      const answer = await app.inject({ url, headers });
      expect(answer.headers['x-content-type-options']).toBe('nosniff');
      expect(answer.headers['content-security-policy']).toContain("frame-ancestors 'none'");
      expect(answer.headers['x-frame-options']).toBe('SAMEORIGIN');
      expect(answer.headers['referrer-policy']).toBe('no-referrer');
    }
  });
});
