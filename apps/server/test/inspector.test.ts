import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CHROMIUM_ARGS, chromiumPath, type ServerProcess, startServer } from '@baton/test-support';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const TOKEN = 'inspector-test-token-0001';

const SCREENSHOTS = join(import.meta.dirname, '..', 'test-results');
const dir = mkdtempSync(join(tmpdir(), 'baton-inspector-'));
let server: ServerProcess;
let browser: Browser;
let page: Page;
/** The webhook the server sends notifications to: it answers every attempt 500. */
let receiver: Server;

beforeAll(async () => {
  receiver = createHttpServer((request, response) => {
    request.resume();
    request.on('end', () => response.writeHead(500).end());
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  // A budget long enough for the page to see a call inline before it is backgrounded; a webhook
  // tried once, so that a delivery fails at its first answer.
  server = await startServer({
    dir,
    env: {
      BATON_INLINE_BUDGET_MS: '1500',
      BATON_TOKENS: `acme:${TOKEN}`,
      BATON_WEBHOOK_URL: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`,
      BATON_WEBHOOK_SECRET: `whsec_${randomBytes(32).toString('base64')}`,
      BATON_WEBHOOK_RETRY_SCHEDULE_MS: '',
    },
  });
  browser = await chromium.launch({
    executablePath: chromiumPath(chromium.executablePath()),
    headless: true,
    args: CHROMIUM_ARGS,
  });
  // A laptop's screen: what the page shows first must fit it.
  page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  expect(await server.stop()).toBe(0);
  receiver.closeAllConnections();
  await new Promise((resolve) => receiver.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

/** Starts a call over the API; the reply (at the end, or at the budget) is not waited for here. */
function call(name: string, args: object, callId: string): Promise<Response> {
  return fetch(`${server.address}/v1/calls`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
    body: JSON.stringify({ name, args, sessionId: 'demo', callId }),
  });
}

const api = async (path: string) =>
  (await fetch(`${server.address}${path}`, { headers: { authorization: `Bearer ${TOKEN}` } })).json();
const tab = (name: string) => page.getByRole('tab', { name }).click();
const row = (callId: string, status: string) =>
  page.locator(`tr[data-call-id="${callId}"][data-status="${status}"]`);
const node = (state: string, count: number) =>
  page.locator(`g[data-state="${state}"][data-count="${count}"]`);

describe('the inspector, in a real browser against the real server', () => {
  it('asks for a token, then shows a slow call move through the machine, live in the drawing and the table', async () => {
    await page.goto(`${server.address}/inspector`);
    await page.getByLabel('Token').fill(TOKEN);
    await page.getByRole('button', { name: 'Open' }).click();
    await page.locator('svg.machine g[data-state="queued"]').waitFor();

    // The calls are on the first screen, beneath the drawing, before anything else.
    const empty = page.getByText('No calls yet.');
    await empty.waitFor();
    const slow = call('slow_report', { seconds: 3 }, 'slow-1');
    await row('slow-1', 'inline').waitFor();
    const table = await page.locator('table.calls').boundingBox();
    expect(table).not.toBeNull();
    expect((table?.y ?? 720) + 60).toBeLessThan(720);
    expect(await page.locator('[data-call-count]').textContent()).toBe('1 call');
    await node('inline', 1).waitFor();
    await row('slow-1', 'backgrounded').waitFor();
    await node('backgrounded', 1).waitFor();
    expect(await (await slow).json()).toMatchObject({ status: 'backgrounded' });
    await row('slow-1', 'succeeded').waitFor();
    await node('succeeded', 1).waitFor();
    await node('backgrounded', 0).waitFor();

    await row('slow-1', 'succeeded').click();
    const detail = page.locator('[data-detail-of="slow-1"]');
    await detail.locator('li[data-event="succeeded"]').waitFor();
    // What the model received: the acknowledgement at its budget, then the notification's text.
    expect(await detail.locator('[data-acknowledgement]').textContent()).toContain(
      'continuing in the background',
    );
    expect(await detail.locator('[data-notification-text]').textContent()).toContain('done after 3 s');
    // Nothing spills out of its column with a call open.
    const side = await page.locator('.side').boundingBox();
    const calls = await page.locator('.main-column').boundingBox();
    expect((calls?.x ?? 0) + (calls?.width ?? 0)).toBeLessThanOrEqual((side?.x ?? 0) + 1);
    expect(
      await page.evaluate('document.documentElement.scrollWidth <= document.documentElement.clientWidth'),
    ).toBe(true);
    expect(
      await detail.locator('li[data-event]').evaluateAll((items) => items.map((item) => item.dataset.event)),
    ).toEqual([
      'queued',
      'started',
      'progress',
      'backgrounded',
      'progress',
      'progress',
      'succeeded',
      'notification',
    ]);
    const onPath = await page
      .locator('g.edge.on-path')
      .evaluateAll((edges) => edges.map((edge) => edge.getAttribute('data-edge')));
    expect(onPath.sort()).toEqual(['backgrounded->succeeded', 'inline->backgrounded', 'queued->inline']);
    await page.locator('g.state.current[data-state="succeeded"]').waitFor();
    expect(await detail.locator('pre').last().textContent()).toContain('done after 3 s');

    // Its notification went to the webhook, which answered 500: the delivery failed after its one try.
    await tab('Webhooks');
    const delivery = page.locator('table.deliveries tr[data-status="failed"]', { hasText: 'slow-1' });
    await delivery.waitFor();
    expect(await delivery.locator('td').allTextContents()).toEqual([
      'slow-1',
      'failed',
      '1',
      expect.stringMatching(/HTTP 500$/),
      '',
    ]);
    await page.getByRole('region', { name: 'Webhook deliveries' }).getByText('1 failed').waitFor();
    await tab('Calls');

    // The open call is in the page's address: a reload opens it again.
    expect(new URL(page.url()).hash).toBe('#/calls/slow-1');
    await page.reload();
    await page.locator('[data-detail-of="slow-1"] li[data-event="notification"]').waitFor();
  });

  it('cancels a call from the page, which the API then reports as cancelled', async () => {
    void call('slow_report', { seconds: 60 }, 'long-1');
    // It reports its progress (a second at a time) before it is cancelled.
    await row('long-1', 'inline').locator('.bar').waitFor();
    await row('long-1', 'inline').click();
    await page.locator('[data-detail-of="long-1"]').getByRole('button', { name: 'Cancel' }).click();
    await row('long-1', 'cancelled').waitFor();
    // What it had done is still said, but an ended call that did not succeed has no bar left.
    await row('long-1', 'cancelled').locator('.progress .label').waitFor();
    expect(await row('long-1', 'cancelled').locator('.bar').count()).toBe(0);
    const record = await fetch(`${server.address}/v1/calls/long-1`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(await record.json()).toMatchObject({ status: 'cancelled' });
  });

  it('lists the tools with their schemas, runs one from a form made from its schema, and follows the new call live', async () => {
    await tab('Tools');
    const tools = page.getByRole('region', { name: 'Tools' });
    const slow = tools.locator('li[data-tool="slow_report"]');
    await slow.waitFor();
    expect(
      await tools.locator('li[data-tool]').evaluateAll((items) => items.map((item) => item.dataset.tool)),
    ).toEqual(['echo', 'slow_report', 'always_fails', 'has_a_bug', 'deploy']);
    expect(await slow.textContent()).toContain('reporting progress');
    // MCP's word for how a tool may be called as a task, said as such.
    expect(await slow.locator('.tool-head').textContent()).toContain('MCP task support: optional');
    await slow.getByRole('button', { name: 'Run' }).click();
    // The form is the tool's JSON Schema: an integer from 1 to 60, 3 by default.
    const seconds = slow.getByLabel('seconds');
    expect(await seconds.inputValue()).toBe('3');
    await seconds.fill('99');
    const callsBefore = await page.locator('[data-call-count]').textContent();
    await slow.getByRole('button', { name: 'Run slow_report' }).click();
    // Refused in the page, by the schema: no call is made.
    await slow.getByText('must be <= 60').first().waitFor();
    expect(await page.locator('[data-call-count]').textContent()).toBe(callsBefore);
    await seconds.fill('2');
    await slow.getByRole('button', { name: 'Run slow_report' }).click();
    // The new call opens at once and moves on live: its progress, its end, and its notification in the session.
    const detail = page.locator('section.detail');
    await detail.locator('li[data-event="progress"]').first().waitFor();
    expect(await detail.locator('li[data-event="progress"]').first().textContent()).toContain('1 / 2 second');
    await detail.locator('li[data-event="notification"]').waitFor();
    const callId = await detail.getAttribute('data-detail-of');
    const record = await fetch(`${server.address}/v1/calls/${callId}`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(await record.json()).toMatchObject({
      toolName: 'slow_report',
      args: { seconds: 2 },
      status: 'succeeded',
    });
    const session = page.locator('section.session[data-session="inspector"]');
    await session.locator(`li[data-notification-of="${callId}"]`).waitFor();
    expect(await session.locator(`li[data-notification-of="${callId}"] pre`).textContent()).toContain(
      'done after 2 s',
    );
    // The time view has a bar for it.
    await tab('Time view');
    await page.locator(`li[data-waterfall-call="${callId}"] .bar.succeeded`).waitFor();
    await tab('Calls');
  });

  it("shows an operator a thrown error's message and stack, which the model never sees", async () => {
    const reply = await call('has_a_bug', {}, 'bug-1');
    expect(await reply.json()).toMatchObject({
      status: 'failed',
      error: { code: 'internal_error', message: expect.not.stringContaining('rows') },
    });
    await row('bug-1', 'failed').click();
    const details = page.locator('[data-detail-of="bug-1"] [data-error-details]');
    await details.waitFor();
    const text = await details.textContent();
    expect(text).toContain("TypeError: Cannot read properties of undefined (reading 'rows')");
    // Its stack, frame by frame.
    expect(text).toMatch(/\n\s+at .+:\d+:\d+/);
  });

  it('draws the states inside a state, the open call in its own: a deploy awaiting approval, its key redacted', async () => {
    void call('deploy', { env: 'staging', deployKey: 'dk-SECRET-0001' }, 'deploy-0');
    await row('deploy-0', 'queued').click();
    await page.locator('g[data-substate="queued.awaiting_approval"].current').waitFor();
    expect(await page.locator('g.substate').count()).toBe(6);
    // It says that it awaits approval, in the table, the detail and its events.
    const detail = page.locator('[data-detail-of="deploy-0"]');
    expect(await row('deploy-0', 'queued').locator('.pill').textContent()).toBe('awaiting approval');
    expect(await detail.locator('p .pill').textContent()).toBe('awaiting approval');
    expect(await detail.locator('li[data-event="backgrounded"]').textContent()).toContain('awaits approval');
    expect(await detail.textContent()).toContain('not started yet');
    // Its secret argument, as the page shows it: redacted, and nowhere in the page.
    expect(await detail.textContent()).toContain('[redacted]');
    expect(await page.content()).not.toContain('dk-SECRET-0001');
    await detail.getByRole('button', { name: 'Approve' }).click();
    await row('deploy-0', 'succeeded').waitFor();
    // Its duration counts from its admission, the wait for approval included; the run is said apart.
    const record = (await api('/v1/calls/deploy-0')) as {
      createdAt: number;
      startedAt: number;
      endedAt: number;
    };
    const seconds = (ms: number) => (ms < 1_000 ? `${Math.round(ms)} ms` : `${(ms / 1_000).toFixed(1)} s`);
    await detail.locator('[data-duration]', { hasText: 'since admission' }).waitFor();
    const duration = await detail.locator('[data-duration]').textContent();
    expect(duration).toContain(`${seconds(record.endedAt - record.createdAt)} since admission`);
    expect(duration).toContain(`(ran ${seconds(record.endedAt - record.startedAt)})`);
    expect(record.startedAt - record.createdAt).toBeGreaterThan(0);
  });

  it('filters the table, and leaves a screenshot of calls in several states', async () => {
    await call('always_fails', {}, 'fails-1');
    await call('echo', { text: 'hello' }, 'echo-1');
    void call('deploy', { env: 'production' }, 'deploy-1');
    void call('slow_report', { seconds: 60 }, 'long-2');
    await row('fails-1', 'failed').waitFor();
    await row('long-2', 'backgrounded').waitFor();
    await row('deploy-1', 'queued').waitFor();

    await page.getByLabel('Filter by state').selectOption('failed');
    // This one, and the call of the tool with a bug.
    expect(await page.locator('table.calls tbody tr').count()).toBe(2);
    await page.getByLabel('Filter by state').selectOption('');
    await page.getByLabel('Filter by tool').selectOption('slow_report');
    // These, and the one run from the form.
    expect(await page.locator('table.calls tbody tr').count()).toBe(4);
    await page.getByLabel('Filter by tool').selectOption('');

    await row('long-2', 'backgrounded').click();
    await page.locator('[data-detail-of="long-2"] li[data-event="progress"]').first().waitFor();
    mkdirSync(SCREENSHOTS, { recursive: true });
    await page.screenshot({ path: join(SCREENSHOTS, 'inspector.png'), fullPage: true });
  });

  it('sorts by a column, opens a call from the keyboard, and searches without asking for calls that are not there', async () => {
    const asked: string[] = [];
    const listen = (request: { url(): string }) => {
      const { pathname, search } = new URL(request.url());
      asked.push(pathname + search);
    };
    page.on('request', listen);
    await page.getByLabel('Search calls').fill('echo-');
    await page.waitForRequest((request) => request.url().includes('/v1/calls?callId=echo-'));
    page.off('request', listen);
    expect(asked.filter((path) => path.startsWith('/v1/calls/echo-'))).toEqual([]);
    await page.getByLabel('Search calls').fill('');

    await page.locator('button[data-sort="tool"]').click();
    const tools = await page.locator('table.calls tbody tr td:nth-child(2)').allTextContents();
    expect(tools.length).toBeGreaterThan(3);
    expect(tools).toEqual([...tools].sort((a, b) => a.localeCompare(b)));
    await page.locator('button[data-sort="admitted"]').click();

    await page.locator('tr[data-call-id="echo-1"] a.call-link').focus();
    await page.keyboard.press('Enter');
    await page.locator('[data-detail-of="echo-1"]').waitFor();
    expect(page.url()).toContain('#/calls/echo-1');
    // A session's page: its calls, and the notifications its model is given.
    await page.locator('tr[data-call-id="echo-1"] a.session-link').click();
    await page.locator('[data-session-page="demo"]').waitFor();
    expect(page.url()).toContain('#/sessions/demo');
    const sessions = await page.locator('table.calls tbody tr td:nth-child(3)').allTextContents();
    expect(new Set(sessions)).toEqual(new Set(['demo']));
    await page.locator('section.session[data-session="demo"]').waitFor();
    // The time view: rows labelled by tool, session and state, over an axis.
    await tab('Time view');
    expect(await page.locator('.waterfall .axis .tick').count()).toBe(5);
    expect(await page.locator('li[data-waterfall-call="echo-1"] .label').textContent()).toContain('demo');
    await tab('Calls');
    await page.locator('tr[data-call-id="echo-1"] a.call-link').click();
    await page.locator('[data-detail-of="echo-1"]').waitFor();
    // The raw request and reply, as the API takes and gives them.
    await page.locator('[data-raw] summary').click();
    const raw = JSON.parse((await page.locator('[data-raw] pre').textContent()) ?? '{}');
    expect(raw).toMatchObject({
      request: { name: 'echo', args: { text: 'hello' }, sessionId: 'demo', callId: 'echo-1' },
      reply: { callId: 'echo-1', status: 'succeeded' },
    });
  });

  it('reaches calls past the latest 500: a search finds one by its id, and older pages follow', async () => {
    // The calls earlier tests left running end first: a live event of one would bring it back
    // among those read, and the count would move on from 500 while the page is looked at.
    for (const status of ['queued', 'inline', 'backgrounded']) {
      const { calls } = (await api(`/v1/calls?status=${status}`)) as { calls: { callId: string }[] };
      for (const { callId } of calls) {
        await fetch(`${server.address}/v1/calls/${callId}/cancel`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
        });
        await expect
          .poll(async () => ((await api(`/v1/calls/${callId}`)) as { status: string }).status)
          .toBe('cancelled');
      }
    }
    // 500 quick calls: the earlier ones are no longer among the latest page.
    for (let first = 0; first < 500; first += 50) {
      await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          call('echo', { text: `bulk ${first + i}` }, `bulk-${first + i}`),
        ),
      );
    }
    await page.goto(`${server.address}/inspector`);
    await page.locator('[data-call-count]', { hasText: '500 calls read, more stored' }).waitFor();
    expect(await page.locator('tr[data-call-id="bug-1"]').count()).toBe(0);

    await page.getByLabel('Search calls').fill('bug-1');
    await row('bug-1', 'failed').waitFor();
    expect(await page.locator('table.calls tbody tr').count()).toBe(1);
    await page.getByLabel('Search calls').fill('');

    await page.getByRole('button', { name: 'Older calls' }).click();
    await row('slow-1', 'succeeded').waitFor();
    await page.locator('[data-call-count]', { hasText: /^\d+ calls$/ }).waitFor();
    expect(await page.getByRole('button', { name: 'Older calls' }).count()).toBe(0);
  });
});
