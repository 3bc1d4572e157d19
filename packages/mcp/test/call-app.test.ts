/**
 * The MCP App of a background call: the tools that may go to the background point to it, the
 * acknowledgement names the call, and a host made of ext-apps' own host pieces, in Chromium,
 * shows the call live and cancels it from the view.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineTool } from '@baton/contracts';
import { createRuntime, type Runtime } from '@baton/runtime';
import { memoryStore, SimulatedClock } from '@baton/runtime/testing';
import {
  CHROMIUM_ARGS,
  chromiumPath,
  RESTART_BUDGET_MS,
  recoveredAndNotified,
  restartingRuntime,
} from '@baton/test-support';
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
    // Each message is a bay to add, until "finish".
    for (let bay = await ctx.nextMessage(); bay !== 'finish'; bay = await ctx.nextMessage()) {
      ctx.update(`mapping ${bay}`);
    }
    return `${coast} coast surveyed`;
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

  /**
   * A host page showing the view of a call, given the acknowledgement; it reaches the server
   * through `clientOf()`, the host's connection of the moment.
   */
  async function hostPage(clientOf: () => Client, args: Record<string, unknown>, acknowledged: unknown) {
    const [resource] = (await clientOf().readResource({ uri: CALL_APP_URI })).contents;
    const page = await browser.newPage({ viewport: { width: 560, height: 380 } });
    await page.exposeFunction(
      'callServerTool',
      (params: { name: string; arguments?: Record<string, unknown> }) => clientOf().callTool(params),
    );
    await page.setContent(`<!doctype html><html><body><script>${hostScript}</script></body></html>`);
    await page.evaluate(
      ([html, input, result]) =>
        (globalThis as unknown as { showCall(...a: unknown[]): Promise<void> }).showCall(html, input, result),
      [(resource as { text: string }).text, args, acknowledged] as const,
    );
    const view = page.frameLocator('iframe');
    const text = (selector: string) => view.locator(selector).textContent();
    await expect.poll(() => text('#state'), { timeout: 15_000 }).toBe('backgrounded');
    return { page, view, text };
  }

  /** The view of a new promoted call of `survey`, in a host page. */
  async function shown() {
    const { client, runtime, survey: surveyed } = await connected();
    const args = { coast: 'north' };
    const acknowledged = await surveyed(args);
    const callId = (acknowledged._meta as Record<string, { callId: string }>)[CALL_META_KEY]?.callId ?? '';
    return { runtime, callId, ...(await hostPage(() => client, args, acknowledged)) };
  }

  it('shows the call live (state, progress, status text, its update, its log tail), takes its messages, and shows its end', async () => {
    const { page, view, text, runtime, callId } = await shown();
    expect(await text('#tool')).toBe('survey');
    expect(await text('#status-text')).toBe('surveying north');
    expect(await text('#progress-text')).toBe('2/5 pages');
    expect(await text('#update')).toBe('update 1: 2 of 5 bays mapped');
    expect(await text('#log')).toBe('[stdout] fetched page 2\n');
    mkdirSync(SCREENSHOTS, { recursive: true });
    await page.screenshot({ path: join(SCREENSHOTS, 'call-app.png') });

    await view.locator('#message').fill('the east bay');
    await view.locator('#send').click();
    await expect.poll(() => text('#sent'), { timeout: 10_000 }).toBe('sent: the east bay');
    await expect.poll(() => text('#update'), { timeout: 10_000 }).toBe('update 2: mapping the east bay');

    await view.locator('#message').fill('finish');
    await view.locator('#send').click();
    await expect.poll(() => text('#state'), { timeout: 15_000 }).toBe('succeeded');
    expect(await text('#end')).toBe('north coast surveyed');
    expect((await runtime.get(callId))?.status).toBe('succeeded');
    expect(await view.locator('#cancel').isDisabled()).toBe(true);
    await page.close();
  }, 60_000);

  it('follows the call across a restart of the server on SQLite, and shows its end', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'baton-call-app-'));
    try {
      const path = join(dir, 'baton.db');
      const before = restartingRuntime(path, true);
      const first = await serveOverHttp(before.runtime);
      let client = new Client({ name: 'host', version: '1.0.0' }, { capabilities: {} });
      await client.connect(new StreamableHTTPClientTransport(new URL(first.url)));
      const started = firstValueFrom(
        before.runtime.events$.pipe(filter((event) => event.type === 'started')),
      );
      const args = { topic: 'tides' };
      const replying = client.callTool({ name: 'research', arguments: args });
      await started;
      before.clock.increment(RESTART_BUDGET_MS);
      const acknowledged = await replying;
      const callId = (acknowledged._meta as Record<string, { callId: string }>)[CALL_META_KEY]?.callId ?? '';
      const { page, text } = await hostPage(() => client, args, acknowledged);
      await client.close();
      await first.close();
      // While the server is down, the view's looks fail, and it says so and looks again.
      await expect.poll(() => text('#end'), { timeout: 15_000 }).toMatch(/^Reconnecting/);

      const after = restartingRuntime(path, false);
      const second = await serveOverHttp(after.runtime);
      served.push(second);
      const reconnected = new Client({ name: 'host', version: '1.0.0' }, { capabilities: {} });
      await reconnected.connect(new StreamableHTTPClientTransport(new URL(second.url)));
      second.onClose(() => reconnected.close());
      client = reconnected;
      await recoveredAndNotified(after, (await after.runtime.get(callId))?.sessionId ?? '');
      await expect.poll(() => text('#state'), { timeout: 15_000 }).toBe('succeeded');
      expect(await text('#end')).toBe('tides: high at noon');
      await page.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('cancels the call from the view', async () => {
    const { page, view, text, runtime, callId } = await shown();
    await view.locator('#cancel').click();
    await expect.poll(() => text('#state'), { timeout: 15_000 }).toBe('cancelled');
    expect((await runtime.get(callId))?.status).toBe('cancelled');
    expect(await view.locator('#send').isDisabled()).toBe(true);
    await page.close();
  }, 60_000);
});
