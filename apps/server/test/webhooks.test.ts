import { randomBytes } from 'node:crypto';
import { createServer as createHttpServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { defineTool } from '@baton/contracts';
import { createRuntime, type Runtime } from '@baton/runtime';
import { deferred, SimulatedClock } from '@baton/runtime/testing';
import type { FastifyInstance } from 'fastify';
import { filter, firstValueFrom } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { loadConfig } from '../src/config.js';
import { environmentWith, parseFlags } from '../src/flags.js';
import { createServer } from '../src/server.js';
import { webhookDestinations, webhookEndpoints, webhooksOf } from '../src/webhooks.js';

const SECRET = `whsec_${randomBytes(32).toString('base64')}`;
const TOKENS = { 'token-of-tenant-a-0001': 'acme', 'token-of-tenant-b-0002': 'bolt' };

const opened: Array<{ app: FastifyInstance; runtime: Runtime; receiver: Server }> = [];
afterEach(async () => {
  for (const { app, runtime, receiver } of opened.splice(0)) {
    await app.close();
    await runtime.close();
    receiver.closeAllConnections();
    await new Promise((resolve) => receiver.close(resolve));
  }
});

describe('webhooks in the server', () => {
  it('shows a delivery that failed after its last try in the API, to its tenant only, and in /metrics', async () => {
    const receiver = createHttpServer((request, response) => {
      request.resume();
      request.on('end', () => response.writeHead(500).end());
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    const gate = deferred<string>();
    const report = defineTool({
      name: 'report',
      description: 'Writes a report in the background',
      input: z.object({}),
      execution: { mode: 'background' },
      execute: () => gate.promise,
    });
    const clock = new SimulatedClock();
    clock.set(Date.now());
    const runtime = createRuntime({
      tools: [report],
      clock,
      webhooks: {
        endpoint: webhookEndpoints({ tenants: { acme: { url, secret: SECRET } } }),
        allow: { loopback: true },
        retryScheduleMs: [],
      },
    });
    const app = createServer({ runtime, tokens: TOKENS, operatorTokens: ['token-of-the-operator'] });
    opened.push({ app, runtime, receiver });
    const acme = { authorization: 'Bearer token-of-tenant-a-0001' };
    const reply = await app.inject({
      method: 'POST',
      url: '/v1/calls',
      headers: acme,
      payload: { name: 'report', sessionId: 'chat', callId: 'r1' },
    });
    expect(reply.json()).toMatchObject({ callId: 'r1', status: 'backgrounded' });
    const failed = firstValueFrom(
      runtime.webhooks.attempts$.pipe(filter((delivery) => delivery.status === 'failed')),
    );
    gate.resolve('the report');
    await failed;

    const listed = await app.inject({ url: '/v1/webhooks/deliveries?status=failed', headers: acme });
    expect(listed.json()).toEqual([
      expect.objectContaining({
        callId: 'r1',
        sessionId: 'chat',
        status: 'failed',
        attempts: 1,
        lastAttempt: expect.objectContaining({ url, status: 500 }),
      }),
    ]);
    // The tenant's body names its own ids.
    expect(JSON.parse(listed.json()[0].body).data).toMatchObject({ callId: 'r1', sessionId: 'chat' });
    const bolt = await app.inject({
      url: '/v1/webhooks/deliveries',
      headers: { authorization: 'Bearer token-of-tenant-b-0002' },
    });
    expect(bolt.json()).toEqual([]);
    const operator = { authorization: 'Bearer token-of-the-operator' };
    const metrics = (await app.inject({ url: '/metrics', headers: operator })).body;
    expect(metrics).toContain('baton_webhook_deliveries{status="failed"} 1');
    expect(metrics).toContain('baton_webhook_deliveries{status="pending"} 0');
    expect(metrics).toContain('baton_webhook_attempts_total{status="failed"} 1');
  });
});

describe('the webhook configuration', () => {
  it('comes from flags (as the environment), the environment and the file, and needs a URL and a secret', () => {
    const config = loadConfig(
      { BATON_WEBHOOK_URL: 'https://hooks.example.com/baton', BATON_WEBHOOK_SECRET: SECRET },
      '/nonexistent',
    );
    expect(config.webhook).toEqual({ url: 'https://hooks.example.com/baton', secret: SECRET });
    const scheduled = loadConfig(
      {
        BATON_WEBHOOK_URL: 'https://x.example',
        BATON_WEBHOOK_SECRET: SECRET,
        BATON_WEBHOOK_RETRY_SCHEDULE_MS: '1000, 60000',
      },
      '/nonexistent',
    );
    expect(webhooksOf(scheduled)?.retryScheduleMs).toEqual([1_000, 60_000]);
    expect(() =>
      loadConfig({ BATON_WEBHOOK_URL: 'https://hooks.example.com/baton' }, '/nonexistent'),
    ).toThrow(
      'bad configuration: a webhook needs both its URL (--webhook-url, BATON_WEBHOOK_URL) and its secret (--webhook-secret, BATON_WEBHOOK_SECRET)',
    );
    expect(() =>
      loadConfig({ BATON_WEBHOOK_URL: 'ftp://x', BATON_WEBHOOK_SECRET: SECRET }, '/nonexistent'),
    ).toThrow(/^bad configuration: BATON_WEBHOOK_URL: /);
    expect(() =>
      loadConfig(
        { BATON_WEBHOOK_URL: 'https://x.example', BATON_WEBHOOK_SECRET: 'not-a-secret' },
        '/nonexistent',
      ),
    ).toThrow('BATON_WEBHOOK_SECRET: expected "whsec_" followed by base64');
  });

  it('refuses at start a private destination, and a loopback one unless the server listens on loopback', () => {
    const base = loadConfig({}, '/nonexistent');
    expect(() => webhooksOf({ ...base, webhook: { url: 'http://10.1.2.3/hook', secret: SECRET } })).toThrow(
      'bad configuration: webhook: the webhook destination 10.1.2.3 is a private, link-local or reserved address: refused unless --webhook-allow-private (BATON_WEBHOOK_ALLOW_PRIVATE=true, webhook.allowPrivate) allows it',
    );
    expect(
      webhooksOf({
        ...base,
        webhook: { url: 'http://10.1.2.3/hook', secret: SECRET },
        webhookAllow: { private: true },
      })?.allow,
    ).toEqual({ loopback: true, private: true });
    expect(
      webhooksOf({ ...base, webhook: { url: 'http://127.0.0.1:9/hook', secret: SECRET } })?.allow,
    ).toEqual({
      loopback: true,
      private: false,
    });
    const exposed = { ...base, host: '0.0.0.0', tokens: TOKENS };
    expect(() =>
      webhooksOf({
        ...exposed,
        tenantWebhooks: { acme: { url: 'http://localhost:9/hook', secret: SECRET } },
      }),
    ).toThrow(
      'bad configuration: tenantWebhooks.acme: the webhook destination localhost is a loopback address: refused unless --webhook-allow-loopback (BATON_WEBHOOK_ALLOW_LOOPBACK=true, webhook.allowLoopback) allows it',
    );
  });

  it('names where webhooks go for the start banner, without credentials or query values', () => {
    const base = loadConfig({}, '/nonexistent');
    expect(webhookDestinations(base)).toBeUndefined();
    expect(
      webhookDestinations({
        ...base,
        webhook: { url: 'https://ops:hunter2@hooks.example.com/baton?token=s3cr3t', secret: SECRET },
        tenantWebhooks: { acme: { url: 'https://acme.example.com/hook', secret: SECRET } },
      }),
    ).toBe("https://***@hooks.example.com/baton?token=***; tenants' own for acme");
  });

  it("allows private and loopback destinations by the server's flags and variables, for tenants' webhooks without a server webhook", () => {
    const exposed = loadConfig(
      {
        BATON_HOST: '0.0.0.0',
        BATON_TOKENS: 'acme:token-of-tenant-a-0001',
        BATON_WEBHOOK_ALLOW_PRIVATE: 'true',
        BATON_WEBHOOK_ALLOW_LOOPBACK: 'true',
      },
      '/nonexistent',
    );
    expect(exposed.webhookAllow).toEqual({ private: true, loopback: true });
    const tenantOnly = webhooksOf({
      ...exposed,
      tenantWebhooks: {
        acme: { url: 'http://10.1.2.3/hook', secret: SECRET },
        bolt: { url: 'http://127.0.0.1:9/hook', secret: SECRET },
      },
    });
    expect(tenantOnly?.allow).toEqual({ loopback: true, private: true });
    const { values } = parseFlags([
      'serve',
      '--webhook-allow-private',
      'true',
      '--webhook-allow-loopback',
      'false',
    ]);
    const flagged = loadConfig(environmentWith(values, {}), '/nonexistent');
    expect(flagged.webhookAllow).toEqual({ private: true, loopback: false });
  });

  it("sends a tenant's notifications to its own webhook with its own ids, and the others' to the server's", () => {
    const endpoint = webhookEndpoints({
      webhook: { url: 'https://ops.example.com/hook', secret: SECRET },
      tenants: { acme: { url: 'https://acme.example.com/hook', secret: SECRET } },
    });
    const acme = endpoint('acme/chat');
    expect(acme?.url).toBe('https://acme.example.com/hook');
    expect(acme?.showId?.('acme/c1')).toBe('c1');
    expect(endpoint('bolt/chat')).toEqual({ url: 'https://ops.example.com/hook', secret: SECRET });
    expect(webhookEndpoints({})('acme/chat')).toBeUndefined();
  });
});
