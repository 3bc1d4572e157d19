/**
 * The MCP App of a background call: the tools that may go to the background point to it, the
 * acknowledgement names the call, and a host made of ext-apps' own host pieces, in Chromium,
 * shows the call live and cancels it from the view.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { defineTool } from '@baton/contracts';
import { createRuntime, type Runtime } from '@baton/runtime';
import { memoryStore, SimulatedClock } from '@baton/runtime/testing';
import { CHROMIUM_ARGS, chromiumPath } from '@baton/test-support';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { build } from 'esbuild';
import { type Browser, chromium } from 'playwright-core';
import { filter, firstValueFrom } from 'rxjs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { CALL_APP_URI, CALL_META_KEY, MCP_APP_MIME_TYPE } from '../src/call-app.js';
import { type OverHttp, serveOverHttp } from './over-http.js';

const SCREENSHOTS = join(import.meta.dirname, '..', 'test-results');

const survey = defineTool({
  name: 'survey',
  description: 'Surveys the coast, page by page; takes minutes',
  input: z.object({ coast: z.string() }),
  messages: z.string().min(1),
  execution: { mode: 'auto' },
  async execute({ coast }, ctx) {
    ctx.status(`surveying ${coast}`);
    ctx.progress({ current: 2, total: 5, unit: 'pages' });
    ctx.log('stdout', 'fetched page 2\n');
    ctx.update('2 of 5 bays mapped');
    await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve));
    return 'stopped';
  },
});
const lookUp = defineTool({
  name: 'look_up',
  description: 'Looks a word up',
  input: z.object({ word: z.string() }),
  execute: ({ word }) => `${word}: a word`,
});

const served: OverHttp[] = [];
afterEach(async () => {
  for (const each of served.splice(0)) await each.close();
});

const BUDGET_MS = 300;

async function connected(): Promise<{
  runtime: Runtime;
  client: Client;
  survey: (args: { coast: string }) => ReturnType<Client['callTool']>;
}> {
  const clock = new SimulatedClock();
  const runtime = createRuntime({
    tools: [survey, lookUp],
    store: memoryStore(),
    clock,
    inlineBudgetMs: BUDGET_MS,
    updateIntervalMs: 1,
  });
  await runtime.ready;
  const http = await serveOverHttp(runtime);
  served.push(http);
  const client = new Client({ name: 'host', version: '1.0.0' }, { capabilities: {} });
  await client.connect(new StreamableHTTPClientTransport(new URL(http.url)));
  http.onClose(() => client.close());
  /** A call of `survey`, moved past its budget once it started: the acknowledgement. */
  const surveyed = async (args: { coast: string }) => {
    const started = firstValueFrom(runtime.events$.pipe(filter((event) => event.type === 'started')));
    const reply = client.callTool({ name: 'survey', arguments: args });
    await started;
    clock.increment(BUDGET_MS);
    return reply;
  };
  return { runtime, client, survey: surveyed };
}

describe('the MCP App of a background call, over MCP', () => {
  it('is linked from the tools that may go to the background, and served as a resource', async () => {
    const { client } = await connected();
    const { tools } = await client.listTools();
    expect(tools.find((tool) => tool.name === 'survey')?._meta).toMatchObject({
      ui: { resourceUri: CALL_APP_URI },
    });
    expect(tools.find((tool) => tool.name === 'look_up')?._meta?.ui).toBeUndefined();
    expect((await client.listResources()).resources).toEqual([
      expect.objectContaining({ uri: CALL_APP_URI, mimeType: MCP_APP_MIME_TYPE }),
    ]);
    const [page] = (await client.readResource({ uri: CALL_APP_URI })).contents;
    expect(page).toMatchObject({ uri: CALL_APP_URI, mimeType: MCP_APP_MIME_TYPE });
    expect((page as { text: string }).text).toMatch(/^<!doctype html>.*check_background/s);
    await expect(client.readResource({ uri: 'ui://baton/other.html' })).rejects.toThrow(/no resource/);
  });

  it('points the host from the acknowledgement to the app, naming the call', async () => {
    const { survey: surveyed, runtime } = await connected();
    const acknowledged = await surveyed({ coast: 'north' });
    const meta = acknowledged._meta as Record<string, { callId?: string; resourceUri?: string }>;
    expect(meta.ui?.resourceUri).toBe(CALL_APP_URI);
    const callId = meta[CALL_META_KEY]?.callId ?? '';
    expect((await runtime.get(callId))?.status).toBe('backgrounded');
  });
});

describe('the MCP App of a background call, in a host made of ext-apps’ own pieces, in Chromium', () => {
  let browser: Browser;
  let hostScript: string;
  beforeAll(async () => {
    const bundled = await build({
      entryPoints: [join(import.meta.dirname, 'call-app', 'host.ts')],
      bundle: true,
      write: false,
      format: 'iife',
      platform: 'browser',
      target: 'es2022',
    });
    hostScript = bundled.outputFiles[0]?.text ?? '';
    browser = await chromium.launch({
      executablePath: chromiumPath(chromium.executablePath()),
      headless: true,
      args: CHROMIUM_ARGS,
    });
  }, 60_000);
  afterAll(() => browser?.close());

  it('shows the call live (state, progress, status text, its update, its log tail) and cancels it', async () => {
    const { client, runtime, survey: surveyed } = await connected();
    const args = { coast: 'north' };
    const acknowledged = await surveyed(args);
    const callId = (acknowledged._meta as Record<string, { callId: string }>)[CALL_META_KEY]?.callId ?? '';
    const [resource] = (await client.readResource({ uri: CALL_APP_URI })).contents;

    const page = await browser.newPage({ viewport: { width: 560, height: 380 } });
    await page.exposeFunction(
      'callServerTool',
      (params: { name: string; arguments?: Record<string, unknown> }) => client.callTool(params),
    );
    await page.setContent(`<!doctype html><html><body><script>${hostScript}</script></body></html>`);
    await page.evaluate(
      ([html, input, result]) =>
        (globalThis as unknown as { showCall(...a: unknown[]): Promise<void> }).showCall(html, input, result),
      [(resource as { text: string }).text, args, acknowledged] as const,
    );
    const view = page.frameLocator('iframe');
    await expect.poll(() => view.locator('#state').textContent(), { timeout: 15_000 }).toBe('backgrounded');
    expect(await view.locator('#tool').textContent()).toBe('survey');
    expect(await view.locator('#status-text').textContent()).toBe('surveying north');
    expect(await view.locator('#progress-text').textContent()).toBe('2/5 pages');
    expect(await view.locator('#update').textContent()).toBe('update 1: 2 of 5 bays mapped');
    expect(await view.locator('#log').textContent()).toBe('[stdout] fetched page 2\n');
    mkdirSync(SCREENSHOTS, { recursive: true });
    await page.screenshot({ path: join(SCREENSHOTS, 'call-app.png') });

    await view.locator('#message').fill('the east bay too');
    await view.locator('#send').click();
    await expect
      .poll(() => view.locator('#sent').textContent(), { timeout: 10_000 })
      .toBe('sent: the east bay too');

    await view.locator('#cancel').click();
    await expect.poll(() => view.locator('#state').textContent(), { timeout: 15_000 }).toBe('cancelled');
    expect((await runtime.get(callId))?.status).toBe('cancelled');
    expect(await view.locator('#cancel').isDisabled()).toBe(true);
    await page.close();
  }, 60_000);
});
