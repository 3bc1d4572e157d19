import Anthropic from '@anthropic-ai/sdk';
import { defineTool, ToolError } from '@baton/contracts';
import { createRuntime, type Runtime } from '@baton/runtime';
import { deferred, memoryStore, SimulatedClock } from '@baton/runtime/testing';
import { filter, firstValueFrom } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { anthropicNotifications, anthropicTools, batonRunnableTools, handleToolUses } from '../src/index.js';

const BUDGET_MS = 300;
const SESSION = 'chat-1';
const ACKNOWLEDGEMENT = `This tool is taking longer than ${BUDGET_MS} ms, so it is continuing in the background.`;

type Block = Anthropic.Messages.ContentBlock;
const toolUse = (id: string, name: string, input: unknown) =>
  ({ type: 'tool_use', id, name, input }) as Block;
const text = (value: string) => ({ type: 'text', text: value, citations: null }) as Block;

/**
 * The Messages API, scripted reply by reply, behind the SDK's own client: each reply is the shape
 * the API returns. It keeps every request body it was sent.
 */
function scriptedClient(replies: Block[][]) {
  const requests: Anthropic.Messages.MessageCreateParams[] = [];
  const fetch = async (_url: string | URL | Request, init?: RequestInit) => {
    requests.push(JSON.parse(String(init?.body)));
    const content = replies.shift() ?? [text('(no more script)')];
    const message = {
      id: `msg_${requests.length}`,
      type: 'message',
      role: 'assistant',
      model: 'claude-test',
      content,
      stop_reason: content.some((block) => block.type === 'tool_use') ? 'tool_use' : 'end_turn',
      stop_sequence: null,
      usage: { input_tokens: 10, output_tokens: 5 },
    };
    return new Response(JSON.stringify(message), { headers: { 'content-type': 'application/json' } });
  };
  const client = new Anthropic({ apiKey: 'test-key', fetch, maxRetries: 0 });
  return { client, requests };
}

const shown = (request: Anthropic.Messages.MessageCreateParams | undefined) => JSON.stringify(request ?? {});

const opened: Runtime[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((runtime) => runtime.close()));
});

function setUp() {
  const gate = deferred<string>();
  const research = defineTool({
    name: 'research',
    description: 'Researches a topic; takes minutes',
    input: z.object({ topic: z.string() }),
    execution: { mode: 'auto' },
    async execute({ topic }, ctx) {
      ctx.signal.addEventListener('abort', () => gate.reject(ctx.signal.reason));
      return `${topic}: ${await gate.promise}`;
    },
  });
  const lookUp = defineTool({
    name: 'look_up',
    description: 'Looks a word up',
    input: z.object({ word: z.string() }),
    async execute({ word }) {
      if (word === 'nothing') throw new ToolError(`No entry for "${word}".`);
      if (word === 'crash') throw new Error('database password is hunter2');
      return { word, meaning: 'a greeting' };
    },
  });
  const clock = new SimulatedClock();
  const runtime = createRuntime({
    tools: [research, lookUp],
    store: memoryStore(),
    clock,
    inlineBudgetMs: BUDGET_MS,
  });
  opened.push(runtime);
  /** The budget passes as soon as the research runs: the call goes to the background. */
  const promoteWhenStarted = () =>
    firstValueFrom(
      runtime.events$.pipe(filter((event) => event.type === 'started' && event.toolName === 'research')),
    ).then(() => clock.increment(BUDGET_MS));
  return { runtime, gate, promoteWhenStarted };
}

describe('an Anthropic Messages loop with Baton tools', () => {
  it('hears the acknowledgement at the budget, goes on, and gets the result back once, in a user turn', async () => {
    const { runtime, gate, promoteWhenStarted } = setUp();
    const { client, requests } = scriptedClient([
      [text('Let me research that.'), toolUse('toolu_1', 'research', { topic: 'tides' })],
      [text('The research goes on in the background.')],
      [text('It is sunny.')],
      [text('The research came back: tides: high at noon.')],
    ]);
    const messages: Anthropic.Messages.MessageParam[] = [];
    const notifications = anthropicNotifications(runtime, { sessionId: SESSION });
    /** One user turn: the user's words after the due notifications, then the loop until the model stops. */
    const turn = async (say: string) => {
      const due = await notifications.blocks({ idle: true });
      messages.push({ role: 'user', content: [...due, { type: 'text', text: say }] });
      for (;;) {
        const message = await client.messages.create({
          model: 'claude-test',
          max_tokens: 1024,
          tools: anthropicTools(runtime),
          messages,
        });
        await notifications.confirm();
        messages.push({ role: 'assistant', content: message.content });
        if (message.stop_reason !== 'tool_use') return message;
        const results = await handleToolUses(runtime, message, { sessionId: SESSION });
        const interrupts = await notifications.blocks({ idle: false });
        messages.push({ role: 'user', content: [...results, ...interrupts] });
      }
    };

    // Turn 1: the tool_use is answered at the budget with the acknowledgement.
    const promoted = promoteWhenStarted();
    const first = await turn('Research the tides.');
    await promoted;
    expect(requests[0]?.tools?.map((tool) => ('name' in tool ? tool.name : tool.type))).toEqual([
      'research',
      'look_up',
    ]);
    expect(requests[1]?.messages[2]).toMatchObject({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: 'toolu_1' }],
    });
    expect(shown(requests[1])).toContain(ACKNOWLEDGEMENT);
    expect(first.content).toEqual([text('The research goes on in the background.')]);
    expect((await runtime.get('toolu_1'))?.status).toBe('backgrounded');

    // Turn 2: the model talks about something else; nothing waits for the research.
    expect((await turn('And the weather?')).content).toEqual([text('It is sunny.')]);
    expect(shown(requests[2])).not.toContain('tides: high at noon');

    // The research ends; its notification opens the next user turn, once.
    const noticed = firstValueFrom(
      runtime.follow({ sessionId: SESSION }).pipe(filter(({ event }) => event.type === 'notification')),
    );
    gate.resolve('high at noon');
    await noticed;
    const third = await turn('Anything new?');
    expect(requests[3]?.messages.at(-1)).toMatchObject({
      role: 'user',
      content: [
        { type: 'text', text: expect.stringContaining('tides: high at noon') },
        { text: 'Anything new?' },
      ],
    });
    expect(shown(requests[3]).split('tides: high at noon').length - 1).toBe(1);
    expect(third.content).toEqual([text('The research came back: tides: high at noon.')]);
    expect(await notifications.blocks({ idle: true })).toEqual([]);
  });

  it("answers a tool's own error with its words and an internal error with the generic message, both is_error", async () => {
    const { runtime } = setUp();
    const message = {
      content: [
        toolUse('toolu_a', 'look_up', { word: 'hello' }),
        toolUse('toolu_b', 'look_up', { word: 'nothing' }),
        toolUse('toolu_c', 'look_up', { word: 'crash' }),
        toolUse('toolu_d', 'look_up', { letter: 'x' }),
      ],
    };
    const results = await handleToolUses(runtime, message, { sessionId: SESSION });
    expect(results.map(({ tool_use_id, is_error }) => [tool_use_id, is_error ?? false])).toEqual([
      ['toolu_a', false],
      ['toolu_b', true],
      ['toolu_c', true],
      ['toolu_d', true],
    ]);
    expect(JSON.parse(String(results[0]?.content))).toEqual({ word: 'hello', meaning: 'a greeting' });
    expect(results[1]?.content).toBe('No entry for "nothing".');
    expect(String(results[2]?.content)).not.toContain('hunter2');
    expect(String(results[3]?.content)).toContain('look_up');
  });

  it('cancels the Baton call when the loop aborts before the tool answers', async () => {
    const { runtime } = setUp();
    const stop = new AbortController();
    const started = firstValueFrom(runtime.events$.pipe(filter((event) => event.type === 'started')));
    const handled = handleToolUses(
      runtime,
      { content: [toolUse('toolu_9', 'research', { topic: 'winds' })] },
      { sessionId: SESSION, signal: stop.signal },
    );
    await started;
    stop.abort();
    const [result] = await handled;
    expect(result?.is_error).toBe(true);
    expect((await runtime.get('toolu_9'))?.status).toBe('cancelled');
  });

  it("runs under the SDK's tool runner: the acknowledgement at the budget, errors as is_error", async () => {
    const { runtime, promoteWhenStarted } = setUp();
    const { client, requests } = scriptedClient([
      [
        toolUse('toolu_r', 'research', { topic: 'moons' }),
        toolUse('toolu_n', 'look_up', { word: 'nothing' }),
      ],
      [text('Research started; no entry for that word.')],
    ]);
    const promoted = promoteWhenStarted();
    const runner = client.beta.messages.toolRunner({
      model: 'claude-test',
      max_tokens: 1024,
      messages: [{ role: 'user', content: 'Research moons and look up "nothing".' }],
      tools: batonRunnableTools(runtime, { sessionId: SESSION }),
    });
    const final = await runner.runUntilDone();
    await promoted;
    expect(final.content).toEqual([text('Research started; no entry for that word.')]);
    // The runner keeps the turn's history, as the README says to take it: the tool calls, Baton's
    // results for them, and the final reply.
    expect(runner.params.messages.map((message) => message.role)).toEqual([
      'user',
      'assistant',
      'user',
      'assistant',
    ]);
    expect(runner.params.messages[2]?.content).toMatchObject([
      { type: 'tool_result', tool_use_id: 'toolu_r' },
      { type: 'tool_result', tool_use_id: 'toolu_n', is_error: true },
    ]);
    expect(runner.params.messages.at(-1)?.content).toEqual([
      text('Research started; no entry for that word.'),
    ]);
    // The runner continues the conversation on the server: the request holds the new turn only.
    expect(requests[1]?.messages.at(-1)).toMatchObject({
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'toolu_r', content: expect.stringContaining(ACKNOWLEDGEMENT) },
        { type: 'tool_result', tool_use_id: 'toolu_n', is_error: true },
      ],
    });
    expect(shown(requests[1])).toContain('No entry for \\"nothing\\".');
    expect((await runtime.get('toolu_r'))?.status).toBe('backgrounded');
  });
});
