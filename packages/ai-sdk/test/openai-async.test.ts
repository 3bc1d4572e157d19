import { createOpenAI } from '@ai-sdk/openai';
import { defineTool } from '@baton/contracts';
import { createRuntime, type Runtime } from '@baton/runtime';
import { memoryStore, SimulatedClock } from '@baton/runtime/testing';
import { generateText } from 'ai';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { batonTools } from '../src/index.js';

const opened: Runtime[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((runtime) => runtime.close()));
});

describe("OpenAI's async tool calling through the AI SDK's OpenAI provider", () => {
  it('declares async exactly the tools that may go to the background, in the Responses request', async () => {
    const runtime = createRuntime({
      tools: [
        defineTool({
          name: 'research',
          description: 'Researches a topic; takes minutes',
          input: z.object({ topic: z.string() }),
          execution: { mode: 'auto' },
          execute: ({ topic }) => topic,
        }),
        defineTool({
          name: 'clock_time',
          description: 'The time',
          input: z.object({}),
          execute: () => '12:00',
        }),
      ],
      store: memoryStore(),
      clock: new SimulatedClock(),
    });
    opened.push(runtime);
    const bodies: Array<{ tools?: Array<{ name: string; async?: boolean }> }> = [];
    const openai = createOpenAI({
      apiKey: 'test-key',
      fetch: async (_url, init) => {
        bodies.push(JSON.parse(String(init?.body)));
        return new Response(
          JSON.stringify({
            id: 'resp_1',
            object: 'response',
            created_at: 0,
            status: 'completed',
            model: 'gpt-6',
            output: [
              {
                type: 'message',
                id: 'msg_1',
                role: 'assistant',
                status: 'completed',
                content: [{ type: 'output_text', text: 'ok', annotations: [] }],
              },
            ],
            incomplete_details: null,
            usage: { input_tokens: 1, output_tokens: 1, total_tokens: 2 },
          }),
          { headers: { 'content-type': 'application/json' } },
        );
      },
    });
    const result = await generateText({
      model: openai.responses('gpt-6'),
      tools: batonTools(runtime, { sessionId: 's1' }),
      prompt: 'Research the tides.',
    });
    expect(result.text).toBe('ok');
    expect(bodies[0]?.tools?.map((tool) => [tool.name, tool.async])).toEqual([
      ['research', true],
      ['clock_time', undefined],
    ]);
  });
});
