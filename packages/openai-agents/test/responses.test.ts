import { defineTool } from '@baton/contracts';
import { createRuntime, type Runtime } from '@baton/runtime';
import { deferred, memoryStore, promoteWhenStarted, SimulatedClock } from '@baton/runtime/testing';
import OpenAI from 'openai';
import { filter, firstValueFrom } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { batonResponses } from '../src/index.js';
import { type Item, ResponsesStandIn } from './responses-stand-in.js';

const BUDGET_MS = 300;
const SESSION = 'chat-1';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function setUp() {
  const gate = deferred<string>();
  const research = defineTool({
    name: 'research',
    description: 'Researches a topic; takes minutes',
    input: z.object({ topic: z.string() }),
    execution: { mode: 'auto' },
    execute: async ({ topic }) => `${topic}: ${await gate.promise}`,
  });
  const lookUp = defineTool({
    name: 'look_up',
    description: 'Looks a word up',
    input: z.object({ word: z.string() }),
    execute: ({ word }) => `${word}: a greeting`,
  });
  const clock = new SimulatedClock();
  const runtime: Runtime = createRuntime({
    tools: [research, lookUp],
    store: memoryStore(),
    clock,
    inlineBudgetMs: BUDGET_MS,
  });
  cleanups.push(() => runtime.close());
  return { runtime, clock, gate };
}

const call = (call_id: string, name: string, args: object): Item => ({
  type: 'function_call',
  call_id,
  name,
  arguments: JSON.stringify(args),
});
const say = (text: string): Item => ({
  type: 'message',
  role: 'assistant',
  content: [{ type: 'output_text', text, annotations: [] }],
});

/** One user turn of a Responses loop of the application's own, as the README writes it. */
async function turn(
  client: OpenAI,
  baton: ReturnType<typeof batonResponses>,
  history: unknown[],
  words: string,
) {
  const input: unknown[] = [
    ...history,
    ...(await baton.results({ idle: true, input: history })),
    { role: 'user', content: words },
  ];
  for (;;) {
    const response = await client.responses.create({ model: 'gpt-6', tools: baton.tools, input } as never);
    await baton.confirm();
    input.push(...response.output);
    const outputs = await baton.outputs(response.output);
    if (outputs.length === 0) return input;
    input.push(...outputs, ...(await baton.results({ idle: false, input })));
  }
}

describe('OpenAI async tool calling in a Responses loop', () => {
  it('declares a tool that may be promoted async, and sends its end later as the function_call_output of its call_id', async () => {
    const { runtime, clock, gate } = setUp();
    const script: Item[][] = [
      [call('call_research', 'research', { topic: 'tides' }), call('call_word', 'look_up', { word: 'hi' })],
      [say('The research goes on; "hi" is a greeting.')],
      [say('The tides are high at noon.')],
    ];
    const standIn = await ResponsesStandIn.start(() => script.shift() ?? [say('ok')]);
    cleanups.push(() => standIn.close());
    const client = new OpenAI({ apiKey: 'test-key', baseURL: standIn.url, maxRetries: 0 });
    const baton = batonResponses(runtime, { sessionId: SESSION });
    expect(baton.tools.map((tool) => [tool.name, tool.async])).toEqual([
      ['research', true],
      ['look_up', undefined],
    ]);

    const promoted = promoteWhenStarted(runtime, clock, 'call_research', BUDGET_MS);
    const history = await turn(client, baton, [], 'Research the tides, and what is hi?');
    await promoted;
    // The async call got no output: the model went on; the other call's output came in the next request.
    const second = standIn.requests[1]?.input ?? [];
    expect(second.filter((item) => item.type === 'function_call_output').map((item) => item.call_id)).toEqual(
      ['call_word'],
    );
    expect((await runtime.get('call_research'))?.status).toBe('backgrounded');

    const noticed = firstValueFrom(runtime.events$.pipe(filter((event) => event.type === 'notification')));
    gate.resolve('high at noon');
    await noticed;
    await turn(client, baton, history, 'Anything new?');
    const third = standIn.requests[2]?.input ?? [];
    const late = third.filter(
      (item) => item.type === 'function_call_output' && item.call_id === 'call_research',
    );
    expect(late).toHaveLength(1);
    expect(late[0]?.output).toContain('tides: high at noon');
    // Before the user's new words.
    expect(third.indexOf(late[0] as Item)).toBeLessThan(
      third.findIndex((item) => item.content === 'Anything new?'),
    );
    expect(await runtime.notifications.list({ sessionId: SESSION, status: 'queued' })).toEqual([]);
  });

  it('answers a model that does not do async calls with the acknowledgement, and its end later as a message, never a second output', async () => {
    const { runtime, clock, gate } = setUp();
    const script: Item[][] = [
      [call('call_research', 'research', { topic: 'tides' })],
      [say('It goes on.')],
      [say('High at noon.')],
    ];
    const standIn = await ResponsesStandIn.start(() => script.shift() ?? [say('ok')], {
      honoursAsync: false,
    });
    cleanups.push(() => standIn.close());
    const client = new OpenAI({ apiKey: 'test-key', baseURL: standIn.url, maxRetries: 0 });
    const baton = batonResponses(runtime, { sessionId: SESSION });
    const promoted = promoteWhenStarted(runtime, clock, 'call_research', BUDGET_MS);
    const history = await turn(client, baton, [], 'Research the tides.');
    await promoted;
    const acknowledged = (standIn.requests[1]?.input ?? []).find(
      (item) => item.type === 'function_call_output',
    );
    expect(acknowledged?.output).toContain('continuing in the background');
    const noticed = firstValueFrom(runtime.events$.pipe(filter((event) => event.type === 'notification')));
    gate.resolve('high at noon');
    await noticed;
    // The stand-in refuses a second output for the call: the loop gives the end as a message.
    await turn(client, baton, history, 'So?');
    const third = standIn.requests[2]?.input ?? [];
    expect(third.filter((item) => item.type === 'function_call_output')).toHaveLength(1);
    expect(JSON.stringify(third.filter((item) => item.role === 'user'))).toContain('tides: high at noon');
  });
});
