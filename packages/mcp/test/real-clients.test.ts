/**
 * MCP clients that nobody here wrote, taking no tasks: each gets a promoted call's result through
 * the tool its acknowledgement names. The models are scripted, and follow the acknowledgement's
 * words: they call the tool it names with the `call_id` it gives.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMCPClient } from '@ai-sdk/mcp';
import { defineTool } from '@baton/contracts';
import { createRuntime, type Runtime } from '@baton/runtime';
import { deferred, memoryStore, SimulatedClock } from '@baton/runtime/testing';
import { Agent, MCPServerStreamableHttp, Runner } from '@openai/agents';
import { generateText, stepCountIs } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { filter } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createMcpHandler, type McpHandler, toNodeHandler } from '../src/index.js';
import { type Move, ScriptedModel } from './scripted-agent-model.js';

const BUDGET_MS = 300;
const RESULT = 'high tide at 12:40';

/**
 * The scripted model's mind: first it asks for research; shown an acknowledgement, it calls the
 * tool the words name with the id they give; shown a result, it says it.
 */
function nextMove(lastShown: string, onFollow: () => void): Move {
  if (lastShown === '') return { call: 'research', args: { topic: 'tides' } };
  const named = /call (\w+) with call_id\W+([0-9a-f-]{36})/.exec(lastShown);
  if (named) {
    onFollow();
    return { call: named[1] as string, args: { call_id: named[2] } };
  }
  return { say: /succeeded/.test(lastShown) && lastShown.includes(RESULT) ? `Research: ${RESULT}` : '?' };
}

interface Served {
  runtime: Runtime;
  clock: SimulatedClock;
  url: string;
  /** Ends the research the model asked for. */
  finish(): void;
}

const opened: Array<{ runtime: Runtime; mcp: McpHandler; http: Server; close?: () => Promise<void> }> = [];
afterEach(async () => {
  for (const { runtime, mcp, http, close } of opened.splice(0)) {
    await close?.();
    await mcp.close();
    http.closeAllConnections();
    await new Promise((resolve) => http.close(resolve));
    await runtime.close();
  }
});

/** A runtime with a slow `research` tool, served over MCP on a loopback port; the budget passes as it starts. */
async function serve(): Promise<Served> {
  const gate = deferred<string>();
  const research = defineTool({
    name: 'research',
    description: 'Researches a topic; takes minutes',
    input: z.object({ topic: z.string() }),
    execution: { mode: 'auto' },
    execute: async () => gate.promise,
  });
  const clock = new SimulatedClock();
  const runtime = createRuntime({
    tools: [research],
    store: memoryStore(),
    clock,
    inlineBudgetMs: BUDGET_MS,
  });
  await runtime.ready;
  runtime.events$
    .pipe(filter((event) => event.type === 'started' && event.toolName === 'research'))
    .subscribe(() => clock.increment(BUDGET_MS));
  const mcp = createMcpHandler({ runtime });
  const http = createServer(toNodeHandler(mcp));
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  opened.push({ runtime, mcp, http });
  const { port } = http.address() as AddressInfo;
  return { runtime, clock, url: `http://localhost:${port}/mcp`, finish: () => gate.resolve(RESULT) };
}

async function researchCalls(runtime: Runtime) {
  return (await runtime.list({ toolName: 'research' })).calls.map(({ status }) => status);
}

describe('MCP clients that take no tasks get the result of a call that went to the background', () => {
  it('the AI SDK: a generateText loop over @ai-sdk/mcp calls the tool the acknowledgement names', async () => {
    const served = await serve();
    const client = await createMCPClient({ transport: { type: 'http', url: served.url } });
    opened.at(-1)!.close = () => client.close();
    const tools = await client.tools();
    expect(Object.keys(tools)).toEqual([
      'research',
      'check_background',
      'wait_background',
      'cancel_background',
      'list_background',
    ]);
    let step = 0;
    const model = new MockLanguageModelV3({
      doGenerate: async ({ prompt }) => {
        step++;
        const last = prompt.at(-1);
        const move = nextMove(last?.role === 'tool' ? JSON.stringify(last.content) : '', served.finish);
        const content =
          'call' in move
            ? [
                {
                  type: 'tool-call' as const,
                  toolCallId: `call-${step}`,
                  toolName: move.call,
                  input: JSON.stringify(move.args),
                },
              ]
            : [{ type: 'text' as const, text: move.say }];
        return {
          content,
          finishReason: { unified: 'call' in move ? 'tool-calls' : 'stop', raw: undefined },
          usage: {
            inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
            outputTokens: { total: 1, text: 1, reasoning: undefined },
          },
          warnings: [],
        };
      },
    });
    const result = await generateText({
      model,
      tools,
      prompt: 'When is high tide?',
      stopWhen: stepCountIs(5),
    });
    expect(result.steps.flatMap((each) => each.toolCalls.map((call) => call.toolName))).toEqual([
      'research',
      'wait_background',
    ]);
    expect(result.text).toBe(`Research: ${RESULT}`);
    expect(await researchCalls(served.runtime)).toEqual(['succeeded']);
  });

  it('OpenAI Agents: an agent over MCPServerStreamableHttp calls the tool the acknowledgement names', async () => {
    const served = await serve();
    const server = new MCPServerStreamableHttp({ url: served.url, name: 'baton' });
    await server.connect();
    opened.at(-1)!.close = () => server.close();
    const model = new ScriptedModel((shown) => nextMove(shown, served.finish));
    const agent = new Agent({ name: 'tides', model, mcpServers: [server] });
    const result = await new Runner({ tracingDisabled: true }).run(agent, 'When is high tide?', {
      maxTurns: 5,
    });
    expect(model.called).toEqual(['research', 'wait_background']);
    expect(result.finalOutput).toBe(`Research: ${RESULT}`);
    expect(await researchCalls(served.runtime)).toEqual(['succeeded']);
  });
});
