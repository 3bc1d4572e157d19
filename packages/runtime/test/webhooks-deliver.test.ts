import { randomBytes } from 'node:crypto';
import type { Notification } from '@baton/contracts';
import { filter, firstValueFrom } from 'rxjs';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import type { Runtime, WebhookOptions, WebhookSend } from '../src/index.js';
import { gatedTool, settle, testRuntime } from './helpers.js';
import { receiver } from './webhook-receiver.js';

const SECRET = `whsec_${randomBytes(32).toString('base64')}`;

/** A runtime with an `auto` tool and webhooks for destinations of their own only; the clock starts now. */
function withSecret(webhooks: Partial<WebhookOptions> = { secret: SECRET }) {
  const research = gatedTool('research', { mode: 'auto' });
  const test = testRuntime([research.tool], {
    inlineBudgetMs: 300,
    webhooks: { allow: { loopback: true }, ...webhooks },
  });
  test.clock.set(Date.now());
  return { ...test, runs: research.runs };
}

/** The notification of a call that went on in the background and ended. */
async function endedNotification(test: ReturnType<typeof withSecret>): Promise<Notification> {
  const reply = test.runtime.call({ name: 'research', args: {}, sessionId: 'a2a:ctx-1' });
  await settle();
  test.clock.increment(300);
  expect((await reply).status).toBe('backgrounded');
  test.runs.at(-1)?.resolve('tide tables');
  const notification = await firstValueFrom(
    test.runtime.notifications.watch({ sessionId: 'a2a:ctx-1' }).pipe(filter((n) => n.outcome !== 'running')),
  );
  return notification;
}

const attempted = (runtime: Runtime) =>
  firstValueFrom(runtime.webhooks.attempts$.pipe(filter((delivery) => delivery.attempts === 1)));

/** An ended call's notification delivered to one destination of its own, and that first attempt. */
async function deliveredOnce(test: ReturnType<typeof withSecret>, send: WebhookSend) {
  const notification = await endedNotification(test);
  const settled = attempted(test.runtime);
  await test.runtime.webhooks.deliver(notification, [send]);
  return { notification, attempt: await settled };
}

describe('webhooks.deliver: a notification delivered to destinations of its own', () => {
  it("POSTs each destination's body with its headers, signed with webhooks.secret under its own webhook-id", async () => {
    const hook = await receiver();
    const { notification, attempt } = await deliveredOnce(withSecret(), {
      key: 'cfg-1',
      url: hook.url,
      body: '{"task":{"id":"t-1"}}',
      headers: { 'Content-Type': 'application/a2a+json', 'X-A2A-Notification-Token': 'tok-1' },
    });
    const { headers, body } = await hook.next();
    expect(attempt).toMatchObject({ status: 'delivered', attempts: 1 });
    expect(body).toBe('{"task":{"id":"t-1"}}');
    expect(headers['content-type']).toBe('application/a2a+json');
    expect(headers['x-a2a-notification-token']).toBe('tok-1');
    expect(headers['webhook-id']).toBe(`msg_${notification.id}_cfg-1`);
    expect(new Webhook(SECRET).verify(body, headers as Record<string, string>)).toEqual({
      task: { id: 't-1' },
    });
  });

  it('stores nothing more when asked again for the same notification and keys, so a redelivered end is sent once', async () => {
    const hook = await receiver();
    const test = withSecret();
    const send = { key: 'cfg-1', url: hook.url, body: '{}' };
    const { notification } = await deliveredOnce(test, send);
    await test.runtime.webhooks.deliver(notification, [send]);
    test.clock.increment(86_400_000);
    expect(await test.runtime.webhooks.deliverDue()).toBe(0);
    expect(hook.received).toHaveLength(1);
    expect(await test.runtime.webhooks.count()).toBe(1);
  });

  it('tries a destination again on the schedule after a 503, where it was made for', async () => {
    const hook = await receiver([503]);
    const test = withSecret({ secret: SECRET, retryScheduleMs: [1_000] });
    const notification = await endedNotification(test);
    const first = attempted(test.runtime);
    await test.runtime.webhooks.deliver(notification, [{ key: 'cfg-1', url: hook.url, body: '{}' }]);
    expect(await first).toMatchObject({ status: 'pending', lastAttempt: { status: 503, url: hook.url } });
    const second = firstValueFrom(test.runtime.webhooks.attempts$);
    test.clock.increment(1_000);
    expect(await second).toMatchObject({ status: 'delivered', attempts: 2 });
    expect(hook.received.map(({ headers }) => headers['webhook-id'])).toEqual([
      `msg_${notification.id}_cfg-1`,
      `msg_${notification.id}_cfg-1`,
    ]);
  });

  it("hides the values of a delivery's own headers when deliveries are listed, but its content type", async () => {
    const hook = await receiver();
    const test = withSecret();
    await deliveredOnce(test, {
      key: 'cfg-1',
      url: hook.url,
      body: '{}',
      headers: { authorization: 'Bearer s3cret', 'content-type': 'application/a2a+json' },
    });
    const [listed] = await test.runtime.webhooks.list();
    expect(listed?.destination).toEqual({
      url: hook.url,
      headers: { authorization: '[redacted]', 'content-type': 'application/a2a+json' },
    });
    expect(JSON.stringify(await test.runtime.webhooks.list())).not.toContain('s3cret');
    expect((await hook.next()).headers.authorization).toBe('Bearer s3cret');
  });

  it('refuses to deliver without a secret, and a destination that is not http(s), with invalid_definition', async () => {
    const hook = await receiver();
    const unsigned = withSecret({ endpoint: () => undefined });
    const notification = await endedNotification(unsigned);
    await expect(
      unsigned.runtime.webhooks.deliver(notification, [{ key: 'k', url: hook.url, body: '{}' }]),
    ).rejects.toMatchObject({
      code: 'invalid_definition',
      message: expect.stringContaining('set webhooks.secret'),
    });
    const signed = withSecret();
    const ended = await endedNotification(signed);
    await expect(
      signed.runtime.webhooks.deliver(ended, [{ key: 'k', url: 'ftp://example.com/x', body: '{}' }]),
    ).rejects.toMatchObject({ code: 'invalid_definition' });
    expect(await signed.runtime.webhooks.count()).toBe(0);
  });

  it('refuses a loopback destination at its attempt unless webhooks.allow.loopback says so', async () => {
    const hook = await receiver();
    const test = withSecret({ secret: SECRET, allow: {} });
    const notification = await endedNotification(test);
    const settled = attempted(test.runtime);
    await test.runtime.webhooks.deliver(notification, [{ key: 'k', url: hook.url, body: '{}' }]);
    expect(await settled).toMatchObject({
      status: 'failed',
      lastAttempt: { error: expect.stringContaining('loopback') },
    });
    expect(hook.received).toHaveLength(0);
  });

  it('rejects deliver on a runtime with no webhooks', async () => {
    const research = gatedTool('research', { mode: 'auto' });
    const { runtime } = testRuntime([research.tool]);
    const notification = { id: 'n-1', callId: 'c-1', sessionId: 's' } as Notification;
    await expect(runtime.webhooks.deliver(notification, [])).rejects.toMatchObject({
      code: 'invalid_definition',
    });
  });
});
