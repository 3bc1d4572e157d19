import { createRuntime, type Runtime } from '@baton/runtime';
import { memoryStore, SimulatedClock } from '@baton/runtime/testing';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { filter, firstValueFrom } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { mcpTools } from '../src/index.js';
import { type RemoteServer, startRemoteServer } from './remote-server.js';

const BUDGET_MS = 300;
const opened: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of opened.splice(0).reverse()) await close();
});

export async function connect(url: URL): Promise<Client> {
  const client = new Client({ name: 'baton-mcp-tools-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(url));
  return client;
}

async function setUp() {
  const remote: RemoteServer = await startRemoteServer();
  opened.push(() => remote.close());
  const client = await connect(remote.url);
  opened.push(() => client.close());
  const tools = await mcpTools(client, { endpointId: remote.url.href, prefix: 'remote_' });
  const clock = new SimulatedClock();
  const runtime: Runtime = createRuntime({ tools, store: memoryStore(), clock, inlineBudgetMs: BUDGET_MS });
  opened.push(() => runtime.close());
  const ended = (callId: string) =>
    firstValueFrom(
      runtime
        .follow({ callId })
        .pipe(filter((event) => ['succeeded', 'failed', 'cancelled'].includes(event.type))),
    );
  return { remote, runtime, clock, ended };
}

describe('a remote MCP server as a tool source', () => {
  it("declares the remote tools under Baton names, with the remote's schemas", async () => {
    const { runtime } = await setUp();
    expect(runtime.tools.names()).toEqual([
      'remote_slow_report',
      'remote_quick_sum',
      'remote_archive_lookup',
    ]);
    const refused = await runtime.call({ name: 'remote_quick_sum', args: { a: 'one' }, sessionId: 's' });
    expect(refused.error?.code).toBe('invalid_arguments');
  });

  it("goes to the background at Baton's budget, follows the remote task, and ends with its result", async () => {
    const { remote, runtime, clock, ended } = await setUp();
    const calling = runtime.call({
      name: 'remote_slow_report',
      args: { topic: 'tides' },
      sessionId: 's',
      callId: 'call-1',
    });
    await remote.taskCreated('tides');
    clock.increment(BUDGET_MS);
    const reply = await calling;
    expect(reply.status).toBe('backgrounded');
    expect(JSON.stringify(reply.output)).toContain(`taking longer than ${BUDGET_MS} ms`);

    const end = ended('call-1');
    await remote.finish('tides', 'high at noon');
    expect((await end).type).toBe('succeeded');
    expect(await runtime.get('call-1')).toMatchObject({ status: 'succeeded', output: 'high at noon' });
    const [notification] = await runtime.notifications.list({ sessionId: 's' });
    expect(notification?.body).toContain('high at noon');
    expect(remote.created).toEqual(['tides']);
  });

  it('answers inline when the remote answers at once, and shows a remote tool error as the tool error', async () => {
    const { runtime } = await setUp();
    expect(
      await runtime.call({ name: 'remote_quick_sum', args: { a: 2, b: 3 }, sessionId: 's' }),
    ).toMatchObject({
      status: 'succeeded',
      output: '5',
    });
    const failed = await runtime.call({ name: 'remote_archive_lookup', args: { key: 'x' }, sessionId: 's' });
    expect(failed).toMatchObject({
      status: 'failed',
      error: { code: 'tool_error', message: 'the archive is down' },
    });
  });

  it('cancelling the Baton call cancels the remote task', async () => {
    const { remote, runtime, clock, ended } = await setUp();
    const calling = runtime.call({
      name: 'remote_slow_report',
      args: { topic: 'winds' },
      sessionId: 's',
      callId: 'c',
    });
    await remote.taskCreated('winds');
    clock.increment(BUDGET_MS);
    await calling;
    const end = ended('c');
    expect(await runtime.cancel('c')).toBe(true);
    expect((await end).type).toBe('cancelled');
    await remote.taskReaches('winds', 'cancelled');
  });
});
