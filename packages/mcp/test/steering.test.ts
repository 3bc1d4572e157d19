/**
 * Steering over MCP: a client of the SDK's own (v1, no tasks) starts a call that goes to the
 * background, steers it with `steer_background`, and gets its result with `wait_background`.
 */
import { defineTool } from '@baton/contracts';
import { createRuntime } from '@baton/runtime';
import { memoryStore } from '@baton/runtime/testing';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type OverHttp, serveOverHttp } from './over-http.js';

const served: OverHttp[] = [];
afterEach(async () => {
  for (const each of served.splice(0)) await each.close();
});

const research = defineTool({
  name: 'research',
  description: 'Researches a topic; send it directions while it runs, and "finish" to end',
  input: z.object({ topic: z.string() }),
  messages: z.string().min(1),
  execution: { mode: 'auto' },
  async execute({ topic }, ctx) {
    const directions: string[] = [];
    for (let message = await ctx.nextMessage(); message !== 'finish'; message = await ctx.nextMessage()) {
      directions.push(message);
      ctx.update(`heading for ${message}`);
    }
    return { topic, directions };
  },
});

const plain = defineTool({
  name: 'plain',
  description: 'Takes no messages',
  input: z.object({}),
  execution: { mode: 'auto' },
  execute: (_args, ctx) => new Promise((resolve) => ctx.signal.addEventListener('abort', resolve)),
});

async function connected(tools = [research, plain]) {
  const runtime = createRuntime({ tools, store: memoryStore(), inlineBudgetMs: 50, updateIntervalMs: 1 });
  await runtime.ready;
  const http = await serveOverHttp(runtime);
  served.push(http);
  const client = new Client({ name: 'steering', version: '1.0.0' }, { capabilities: {} });
  await client.connect(new StreamableHTTPClientTransport(new URL(http.url)));
  http.onClose(() => client.close());
  return { runtime, client };
}

const callIdOf = (result: unknown) =>
  /call_id\W+([0-9a-f-]{36})/.exec(
    (result as { content: Array<{ text: string }> }).content[0]?.text ?? '',
  )?.[1] ?? '';

describe('steer_background over MCP', () => {
  it('is listed beside a tool that takes messages, steers its call, and the wait gives the result', async () => {
    const { client } = await connected();
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    expect(names).toContain('steer_background');
    const callId = callIdOf(await client.callTool({ name: 'research', arguments: { topic: 'tides' } }));
    expect(callId).not.toBe('');
    const steer = (message: string) =>
      client.callTool({ name: 'steer_background', arguments: { call_id: callId, message } });
    for (const [index, message] of ['look at the moon', 'and the wind'].entries()) {
      const steered = await steer(message);
      expect(steered.structuredContent).toMatchObject({
        call_id: callId,
        message_seq: index + 1,
        status: 'sent',
      });
    }
    // The tool's update of what it was told last, through the control tools.
    await expect
      .poll(async () => {
        const checked = await client.callTool({ name: 'check_background', arguments: { call_id: callId } });
        return checked.structuredContent;
      })
      .toMatchObject({ status: 'backgrounded', update: 'heading for and the wind', update_seq: 2 });
    expect((await steer('finish')).structuredContent).toMatchObject({ message_seq: 3 });
    const waited = await client.callTool({ name: 'wait_background', arguments: { call_id: callId } });
    expect(waited.structuredContent).toMatchObject({
      status: 'succeeded',
      result: { topic: 'tides', directions: ['look at the moon', 'and the wind'] },
    });
    const again = await client.callTool({
      name: 'steer_background',
      arguments: { call_id: callId, message: 'more' },
    });
    expect(again.isError).toBe(true);
    expect(again.content).toEqual([
      {
        type: 'text',
        text: `The call "${callId}" has already ended (succeeded) and reads no more messages: its result is final. Start a new call to change it.`,
      },
    ]);
  });

  it("shows a task's reader the call's latest update as its status message", async () => {
    const { client } = await connected();
    const { task } = await client.request(
      { method: 'tools/call', params: { name: 'research', arguments: { topic: 'tides' } } },
      CreateTaskResultSchema,
      { task: { ttl: 60_000 } },
    );
    await client.callTool({
      name: 'steer_background',
      arguments: { call_id: task.taskId, message: 'the bay' },
    });
    await expect
      .poll(async () => (await client.experimental.tasks.getTask(task.taskId)).statusMessage)
      .toBe('update 1: heading for the bay');
  });

  it('tells the model a tool that takes no messages cannot be steered', async () => {
    const { client } = await connected();
    const callId = callIdOf(await client.callTool({ name: 'plain', arguments: {} }));
    const refused = await client.callTool({
      name: 'steer_background',
      arguments: { call_id: callId, message: 'hi' },
    });
    expect(refused.isError).toBe(true);
    expect(refused.content).toEqual([
      {
        type: 'text',
        text: 'The tool "plain" takes no messages while it runs: to change what it does, cancel the call and start a new one.',
      },
    ]);
  });

  it('is not listed when no tool takes messages', async () => {
    const { client } = await connected([plain]);
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    expect(names).toContain('wait_background');
    expect(names).not.toContain('steer_background');
  });
});
