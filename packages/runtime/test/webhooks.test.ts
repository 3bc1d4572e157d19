import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RuntimeFailure, WebhookDelivery } from '@baton/contracts';
import { sqliteStore } from '@baton/store-sqlite';
import { filter, firstValueFrom } from 'rxjs';
import { Webhook } from 'standardwebhooks';
import { afterAll, describe, expect, it } from 'vitest';
import { createRuntime, type Runtime, type WebhookOptions } from '../src/index.js';
import { SimulatedClock } from '../src/testing.js';
import { addressKind, guardedLookup, refusedLiteral } from '../src/webhooks/destinations.js';
import { gatedTool, reportingTool, settle, testRuntime } from './helpers.js';
import { type Received, receiver, receivers } from './webhook-receiver.js';

const SECRET = `whsec_${randomBytes(32).toString('base64')}`;
const dir = mkdtempSync(join(tmpdir(), 'baton-webhooks-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A runtime with an `auto` tool `research` and a webhook; the clock starts now, as a receiver checks the timestamp. */
function withWebhook(webhooks: Partial<WebhookOptions> & Pick<WebhookOptions, 'endpoint'>, options = {}) {
  const research = gatedTool('research', { mode: 'auto' });
  const test = testRuntime([research.tool], {
    inlineBudgetMs: 300,
    webhooks: { allow: { loopback: true }, ...webhooks },
    ...options,
  });
  test.clock.set(Date.now());
  return { ...test, runs: research.runs };
}

/** Starts `research`, passes its budget (its caller is answered `backgrounded`), and ends it with `value`. */
async function backgroundCall(
  runtime: Runtime,
  clock: SimulatedClock,
  runs: ReturnType<typeof gatedTool>['runs'],
  value: unknown,
) {
  const reply = runtime.call({ name: 'research', args: { topic: 'tides' }, sessionId: 'chat-1' });
  await settle();
  clock.increment(300);
  const { callId, status } = await reply;
  expect(status).toBe('backgrounded');
  runs.at(-1)?.resolve(value);
  return callId;
}

const attempted = (runtime: Runtime, attempts: number) =>
  firstValueFrom(runtime.webhooks.attempts$.pipe(filter((delivery) => delivery.attempts === attempts)));

describe('webhooks: each notification POSTed to the Standard Webhooks spec', () => {
  it('signs a delivery so that the standardwebhooks package verifies it, and names the call, its session, tool, status and output', async () => {
    const hook = await receiver();
    const { runtime, clock, runs } = withWebhook({ endpoint: { url: hook.url, secret: SECRET } });
    const settled = attempted(runtime, 1);
    const callId = await backgroundCall(runtime, clock, runs, { tide: 'high at 12:40' });
    const { headers, body } = await hook.next();
    await settled;
    const verified = new Webhook(SECRET).verify(body, headers as Record<string, string>) as {
      type: string;
      data: Record<string, unknown>;
    };
    const [notification] = await runtime.notifications.list({ sessionId: 'chat-1' });
    expect(verified).toEqual({
      type: 'call.ended',
      timestamp: new Date(notification?.createdAt ?? 0).toISOString(),
      data: {
        notificationId: notification?.id,
        callId,
        sessionId: 'chat-1',
        tool: 'research',
        status: 'succeeded',
        output: { tide: 'high at 12:40' },
        error: null,
        title: 'Task completed: Background tool: research',
        body: expect.stringContaining('Return value:'),
        scheduling: 'when_idle',
      },
    });
    expect(headers['webhook-id']).toBe(`msg_${notification?.id}`);
    expect(headers['content-type']).toBe('application/json');
    const [delivery] = await runtime.webhooks.list();
    expect(delivery).toMatchObject({
      status: 'delivered',
      attempts: 1,
      lastAttempt: { url: hook.url, status: 200 },
    });
    // Forged or altered, it does not verify.
    expect(() => new Webhook(SECRET).verify(`${body} `, headers as Record<string, string>)).toThrow();
  });

  it('carries a call’s end only: not its update, nor its reminder that it still runs', async () => {
    const hook = await receiver();
    const worker = reportingTool((ctx) => ctx.update('half way'), 'done');
    const { runtime, clock } = testRuntime([worker.tool], {
      webhooks: { allow: { loopback: true }, endpoint: { url: hook.url, secret: SECRET } },
    });
    clock.set(Date.now());
    const { callId } = await runtime.call({ name: 'worker', sessionId: 'chat-1', notifyAfterMs: [1_000] });
    await settle();
    clock.increment(1_000);
    await settle();
    // The session was told both, as notifications.
    const told = await runtime.notifications.list({ sessionId: 'chat-1' });
    expect(told.map((notification) => notification.outcome)).toEqual(['running', 'running']);
    const settled = attempted(runtime, 1);
    worker.step.resolve();
    const { body } = await hook.next();
    await settled;
    expect(JSON.parse(body)).toMatchObject({ type: 'call.ended', data: { callId, status: 'succeeded' } });
    expect(await runtime.webhooks.list()).toHaveLength(1);
  });

  it('tries again after a 503 within 5 s with the same webhook-id, and makes no third attempt after a 2xx', async () => {
    const hook = await receiver([503]);
    const { runtime, clock, runs } = withWebhook({ endpoint: { url: hook.url, secret: SECRET } });
    const first = attempted(runtime, 1);
    await backgroundCall(runtime, clock, runs, 'done');
    const retry = await first;
    expect(retry).toMatchObject({ status: 'pending', lastAttempt: { status: 503 } });
    expect(retry.nextAt - (retry.lastAttempt?.at ?? 0)).toBe(5_000);
    clock.increment(4_999);
    expect(await runtime.webhooks.deliverDue()).toBe(0);
    const second = attempted(runtime, 2);
    clock.increment(1);
    expect(await second).toMatchObject({ status: 'delivered', attempts: 2 });
    clock.increment(86_400_000);
    expect(await runtime.webhooks.deliverDue()).toBe(0);
    expect(hook.received).toHaveLength(2);
    const [a, b] = hook.received as [Received, Received];
    expect(a.headers['webhook-id']).toBe(b.headers['webhook-id']);
    expect(a.body).toBe(b.body);
    // Each attempt is signed with its own time.
    expect(Number(b.headers['webhook-timestamp']) - Number(a.headers['webhook-timestamp'])).toBe(5);
  });

  it('marks a delivery failed after its last try, visible in the list and reported as a failure', async () => {
    const hook = await receiver([500, 500, 500]);
    const { runtime, clock, runs } = withWebhook({
      endpoint: { url: hook.url, secret: SECRET },
      retryScheduleMs: [1_000],
    });
    const failures: RuntimeFailure[] = [];
    runtime.failures$.subscribe((failure) => failures.push(failure));
    const first = attempted(runtime, 1);
    const callId = await backgroundCall(runtime, clock, runs, 'done');
    await first;
    const last = attempted(runtime, 2);
    clock.increment(1_000);
    expect(await last).toMatchObject({ status: 'failed', lastAttempt: { status: 500 } });
    expect((await runtime.webhooks.list({ status: 'failed' })).map((delivery) => delivery.callId)).toEqual([
      callId,
    ]);
    expect(await runtime.webhooks.count({ status: 'failed' })).toBe(1);
    expect(failures).toEqual([
      expect.objectContaining({
        op: 'webhook delivery',
        callId,
        error: new Error(
          `webhook delivery msg_${(await runtime.notifications.list())[0]?.id} failed after 2 attempts: HTTP 500`,
        ),
      }),
    ]);
    clock.increment(86_400_000);
    expect(await runtime.webhooks.deliverDue()).toBe(0);
    expect(hook.received).toHaveLength(2);
  });

  it('gives a delivery up at once when its receiver answers 410 Gone', async () => {
    const hook = await receiver([410]);
    const { runtime, clock, runs } = withWebhook({ endpoint: { url: hook.url, secret: SECRET } });
    const first = attempted(runtime, 1);
    await backgroundCall(runtime, clock, runs, 'done');
    expect(await first).toMatchObject({ status: 'failed', attempts: 1, lastAttempt: { status: 410 } });
    clock.increment(86_400_000);
    expect(await runtime.webhooks.deliverDue()).toBe(0);
    expect(hook.received).toHaveLength(1);
  });

  it('makes after a restart a delivery its receiver refused before it', async () => {
    // A port where nothing listens yet: the first attempt's connection is refused.
    const down = await receiver();
    const { port } = new URL(down.url);
    await down.close();
    const path = join(dir, 'restart.db');
    const research = gatedTool('research', { mode: 'auto' });
    const clock = new SimulatedClock();
    clock.set(Date.now());
    const webhooks: WebhookOptions = {
      endpoint: { url: down.url, secret: SECRET },
      allow: { loopback: true },
    };
    const first = createRuntime({
      tools: [research.tool],
      store: sqliteStore({ path }),
      clock,
      inlineBudgetMs: 300,
      webhooks,
    });
    const refused = attempted(first, 1);
    await backgroundCall(first, clock, research.runs, 'kept');
    expect(await refused).toMatchObject({
      status: 'pending',
      lastAttempt: { error: expect.stringContaining('ECONNREFUSED') },
    });
    await first.close();

    const hook = await receiver([], Number(port));
    const later = new SimulatedClock();
    later.set(Date.now() + 60_000);
    const second = createRuntime({ store: sqliteStore({ path }), clock: later, webhooks });
    try {
      const delivered = attempted(second, 2);
      await second.ready;
      expect(await delivered).toMatchObject({ status: 'delivered' });
      expect(JSON.parse((await hook.next()).body).data.output).toBe('kept');
    } finally {
      await second.close();
    }
  });

  it('shows a session its own ids, and sends a session without an endpoint nothing', async () => {
    const hook = await receiver();
    const { runtime, clock, runs } = withWebhook({
      endpoint: (sessionId) =>
        sessionId.startsWith('acme/')
          ? { url: hook.url, secret: SECRET, showId: (id) => id.replace(/^acme\//, '') }
          : undefined,
    });
    const reply = runtime.call({ name: 'research', sessionId: 'acme/chat', callId: 'acme/c1' });
    await settle();
    clock.increment(300);
    await reply;
    runs.at(-1)?.resolve('for acme');
    expect(JSON.parse((await hook.next()).body).data).toMatchObject({ callId: 'c1', sessionId: 'chat' });
    await backgroundCall(runtime, clock, runs, 'for nobody');
    await settle();
    expect(await runtime.notifications.count()).toBe(2);
    expect(await runtime.webhooks.count()).toBe(1);
  });
});

describe('webhook destinations', () => {
  it('refuses at once a private, link-local or loopback address written in the URL, unless allowed', () => {
    const make = (url: string, allow?: WebhookOptions['allow']) => () =>
      createRuntime({ webhooks: { endpoint: { url, secret: SECRET }, ...(allow ? { allow } : {}) } });
    expect(make('http://10.0.0.7/hook')).toThrow(
      'createRuntime: webhooks: the webhook destination 10.0.0.7 is a private, link-local or reserved address: refused unless webhooks.allow.private allows it',
    );
    expect(make('http://169.254.169.254/latest/meta-data')).toThrow(/webhooks\.allow\.private/);
    expect(make('http://[::ffff:192.168.1.1]/hook')).toThrow(/webhooks\.allow\.private/);
    expect(make('http://localhost:9000/hook')).toThrow(
      'createRuntime: webhooks: the webhook destination localhost is a loopback address: refused unless webhooks.allow.loopback allows it',
    );
    expect(make('http://127.0.0.1:9000/hook', { loopback: true })).not.toThrow();
    expect(make('http://10.0.0.7/hook', { private: true })).not.toThrow();
    expect(make('ftp://example.com/hook')).toThrow(
      '"ftp://example.com/hook" is not an http:// or https:// URL',
    );
    expect(() =>
      createRuntime({ webhooks: { endpoint: { url: 'https://example.com', secret: 'whsec_c2hvcnQ=' } } }),
    ).toThrow('a secret is "whsec_" followed by the base64 of 24 to 64 random bytes');
  });

  it('tells public addresses from the rest, IPv6 and IPv4 written as IPv6 included', () => {
    expect(['8.8.8.8', '2606:4700:4700::1111', '172.32.0.1'].map(addressKind)).toEqual([
      'public',
      'public',
      'public',
    ]);
    // The unspecified addresses reach this machine's own listeners when connected to.
    expect(
      ['127.0.0.1', '127.8.9.10', '::1', '::ffff:127.0.0.1', '0.0.0.0', '::', '::ffff:0.0.0.0'].map(
        addressKind,
      ),
    ).toEqual(Array(7).fill('loopback'));
    // With private destinations allowed and loopback not, `0.0.0.0` and `[::]` stay refused.
    const privateOnly = { loopback: false, private: true };
    expect(refusedLiteral(new URL('http://0.0.0.0:8080/'), privateOnly)).toMatch(/loopback/);
    expect(refusedLiteral(new URL('http://[::]:8080/'), privateOnly)).toMatch(/loopback/);
    expect(refusedLiteral(new URL('http://10.0.0.1:8080/'), privateOnly)).toBeUndefined();
    expect(
      [
        '10.1.2.3',
        '172.16.0.1',
        '192.168.0.1',
        '169.254.169.254',
        '100.64.0.1',
        '0.1.2.3',
        'fd00:ec2::254',
        'fe80::1',
        '::ffff:10.0.0.1',
      ].map(addressKind),
    ).toEqual(Array(9).fill('private'));
  });

  it('judges every IPv6 form of an IPv4 address as that address: mapped, compatible, NAT64, 6to4, in hexadecimal as a URL writes them', () => {
    const hostOf = (written: string) => new URL(`http://[${written}]/`).hostname.replace(/^\[|\]$/g, '');
    // A URL writes `[::ffff:127.0.0.1]` as `[::ffff:7f00:1]`.
    expect(hostOf('::ffff:127.0.0.1')).toBe('::ffff:7f00:1');
    expect(
      ['::ffff:127.0.0.1', '::127.0.0.1', '64:ff9b::127.0.0.1', '2002:7f00:1::', '::ffff:7f00:1'].map(
        (written) => addressKind(hostOf(written)),
      ),
    ).toEqual(Array(5).fill('loopback'));
    expect(
      [
        '::10.0.0.1',
        '64:ff9b::10.1.2.3',
        '64:ff9b::169.254.169.254',
        '2002:c0a8:1::1',
        '2001:0:4136:e378::1',
      ].map((written) => addressKind(hostOf(written))),
    ).toEqual(Array(5).fill('private'));
    expect(['64:ff9b::8.8.8.8', '2002:808:808::1'].map((written) => addressKind(hostOf(written)))).toEqual([
      'public',
      'public',
    ]);
    expect(['::1', '::'].map(addressKind)).toEqual(['loopback', 'loopback']);
  });

  it('refuses a name that resolves to a refused address, on the address the connection would use', async () => {
    const lookup = guardedLookup({ loopback: false, private: false });
    const error = await new Promise<NodeJS.ErrnoException | null>((resolve) =>
      lookup('localhost', {}, (failed) => resolve(failed)),
    );
    expect(error).toMatchObject({
      code: 'EDESTINATION',
      message: expect.stringContaining('is a loopback address'),
    });
    const allowed = guardedLookup({ loopback: true, private: false });
    const address = await new Promise<string>((resolve, reject) =>
      allowed('localhost', {}, (failed, found) => (failed ? reject(failed) : resolve(String(found)))),
    );
    expect(addressKind(address)).toBe('loopback');
  });

  it('fails at once, without retrying, a delivery whose endpoint is refused when it is tried', async () => {
    const { runtime, clock, runs } = withWebhook({
      endpoint: () => ({ url: 'http://192.168.10.20/hook', secret: SECRET }),
      allow: {},
    });
    const tried = attempted(runtime, 1);
    await backgroundCall(runtime, clock, runs, 'done');
    const delivery: WebhookDelivery = await tried;
    expect(delivery).toMatchObject({
      status: 'failed',
      lastAttempt: {
        error: expect.stringContaining('192.168.10.20 is a private, link-local or reserved address'),
      },
    });
  });
});

/** A receiver that takes requests and never answers them. */
async function hangingReceiver() {
  let requests = 0;
  const server: Server = createServer(() => {
    requests++;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receivers.push(server);
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/stuck`,
    requests: () => requests,
  };
}

/** Ends a background `research` call of `sessionId` with `value`. */
async function endInBackground(
  test: ReturnType<typeof withWebhook>,
  sessionId: string,
  value: unknown,
): Promise<string> {
  const reply = test.runtime.call({ name: 'research', args: {}, sessionId });
  await settle();
  test.clock.increment(300);
  const { callId } = await reply;
  test.runs.at(-1)?.resolve(value);
  return callId;
}

describe('webhooks: slow receivers, drains and what an operator is told', () => {
  it("a receiver that never answers delays only its own deliveries: another tenant's arrive within 1 s", async () => {
    const stuck = await hangingReceiver();
    const prompt = await receiver();
    const test = withWebhook({
      endpoint: (sessionId) => ({
        url: sessionId.startsWith('slow/') ? stuck.url : prompt.url,
        secret: SECRET,
      }),
    });
    const notified = new Map<string, number>();
    test.runtime.events$
      .pipe(filter((event) => event.type === 'notification'))
      .subscribe((event) => notified.set(event.callId, Date.now()));
    // More deliveries to the hanging receiver than it may hold at once.
    for (let each = 0; each < 10; each++) await endInBackground(test, `slow/chat-${each}`, each);
    await expect.poll(() => stuck.requests()).toBe(4);
    const late: number[] = [];
    for (let each = 0; each < 3; each++) {
      const callId = await endInBackground(test, `fast/chat-${each}`, each);
      const { body } = await prompt.next();
      expect(JSON.parse(body).data.callId).toBe(callId);
      late.push(Date.now() - (notified.get(callId) ?? 0));
    }
    expect(Math.max(...late)).toBeLessThan(1_000);
    // The hanging receiver still holds only its share; once it has stalled, what was claimed for
    // it is put back until its oldest attempt's time is up, and holds no room here.
    expect(stuck.requests()).toBe(4);
    test.clock.increment(1_000);
    await test.runtime.webhooks.deliverDue();
    const waiting = (await test.runtime.webhooks.list({ status: 'pending' })).filter(
      (delivery) => delivery.attempts === 0 && delivery.sessionId.startsWith('slow/'),
    );
    // Four attempted (their answer never comes), six given back for later.
    expect(waiting).toHaveLength(10);
    expect(waiting.filter((delivery) => delivery.nextAt > test.clock.now())).toHaveLength(6);
  });

  it('a call that ends during the drain is delivered before the process exits', async () => {
    const hook = await receiver();
    const test = withWebhook({ endpoint: { url: hook.url, secret: SECRET } });
    const reply = test.runtime.call({ name: 'research', args: {}, sessionId: 'chat-1' });
    await settle();
    test.clock.increment(300);
    const { callId } = await reply;
    const closing = test.runtime.close({ drainMs: 10_000 });
    await settle();
    test.runs.at(-1)?.resolve('ended in the drain');
    await closing;
    expect(hook.received.map(({ body }) => JSON.parse(body).data.callId)).toEqual([callId]);
  });

  it('an attempt cut short by the exit is given back: the next process delivers it at once, as a first attempt', async () => {
    const stuck = await hangingReceiver();
    const hook = await receiver();
    const path = join(dir, `given-back-${Date.now()}.db`);
    const research = gatedTool('research', { mode: 'auto' });
    const clock = new SimulatedClock();
    clock.set(Date.now());
    const first = createRuntime({
      tools: [research.tool],
      store: sqliteStore({ path }),
      clock,
      inlineBudgetMs: 300,
      webhooks: { endpoint: { url: stuck.url, secret: SECRET }, allow: { loopback: true } },
    });
    await backgroundCall(first, clock, research.runs, 'kept');
    await expect.poll(() => stuck.requests()).toBe(1);
    await first.close();

    // The same moment: nothing waits out the claim the first process had.
    const second = createRuntime({
      store: sqliteStore({ path }),
      clock,
      webhooks: { endpoint: { url: hook.url, secret: SECRET }, allow: { loopback: true } },
    });
    try {
      const delivered = attempted(second, 1);
      await second.ready;
      expect(await delivered).toMatchObject({ status: 'delivered', attempts: 1 });
    } finally {
      await second.close();
    }
  });

  it('logs each failed attempt at warn: the destination without its credentials, the status, when it is tried next', async () => {
    const hook = await receiver([503]);
    const warned: Array<{ fields: Record<string, unknown>; message: string | undefined }> = [];
    const logger = {
      error: () => {},
      info: () => {},
      debug: () => {},
      warn: (fields: object, message?: string) =>
        warned.push({ fields: fields as Record<string, unknown>, message }),
    };
    const url = new URL(hook.url);
    url.username = 'baton';
    url.password = 'hunter2';
    url.search = '?token=s3cr3t&v=1';
    const test = withWebhook({ endpoint: { url: url.href, secret: SECRET } }, { logger });
    const first = attempted(test.runtime, 1);
    await backgroundCall(test.runtime, test.clock, test.runs, 'done');
    const settled = await first;
    const shown = `http://***@${url.host}/hooks/baton?token=***&v=***`;
    expect(settled.lastAttempt?.url).toBe(shown);
    expect(warned).toEqual([
      {
        fields: expect.objectContaining({
          destination: shown,
          status: 503,
          attempt: 1,
          nextAt: new Date((settled.lastAttempt?.at ?? 0) + 5_000).toISOString(),
        }),
        message: `webhook attempt to ${shown} failed (HTTP 503); tried again in 5 s`,
      },
    ]);
    expect(JSON.stringify(warned)).not.toMatch(/hunter2|s3cr3t/);
    expect(JSON.stringify(await test.runtime.webhooks.list())).not.toMatch(/hunter2|s3cr3t/);
    // The receiver got the request as configured, credentials and all.
    expect(hook.received[0]?.headers.authorization).toBe(
      `Basic ${Buffer.from('baton:hunter2').toString('base64')}`,
    );
  });

  it('a refusal names the setting that allows the destination', () => {
    expect(() =>
      testRuntime([], {
        webhooks: {
          endpoint: { url: 'http://10.0.0.8/hook', secret: SECRET },
          allowedBy: { private: '--webhook-allow-private' },
        },
      }),
    ).toThrow(
      'the webhook destination 10.0.0.8 is a private, link-local or reserved address: refused unless --webhook-allow-private allows it',
    );
  });
});
