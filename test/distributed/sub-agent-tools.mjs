// The sub-agent of the end-to-end steering test, served by `baton worker` and declared to the
// test's client: an AI SDK agent loop over a scripted model. It answers turn N once the file
// go-N exists in $SUB_AGENT_DIR, and appends "N <pid>" to asked.log each time it is asked, so
// the test sees which turns each process asked for.
import { appendFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { subAgentTool } from '@baton/ai-sdk';
import { tool } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { z } from 'zod';

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};

/** What the caller said to it after its task: the steering messages, in the order they entered. */
const steeringIn = (prompt) =>
  prompt
    .filter((message) => message.role === 'user')
    .flatMap((message) => message.content.filter((part) => part.type === 'text').map((part) => part.text))
    .slice(1);

const model = new MockLanguageModelV3({
  doGenerate: async ({ prompt, abortSignal }) => {
    const dir = process.env.SUB_AGENT_DIR;
    const turn = prompt.filter((message) => message.role === 'assistant').length + 1;
    appendFileSync(join(dir, 'asked.log'), `${turn} ${process.pid}\n`);
    while (!existsSync(join(dir, `go-${turn}`))) await sleep(20, undefined, { signal: abortSignal });
    if (turn < 3) {
      return {
        content: [
          { type: 'text', text: `Read source ${turn}.` },
          {
            type: 'tool-call',
            toolCallId: `s${turn}`,
            toolName: 'search',
            input: JSON.stringify({ n: turn }),
          },
        ],
        finishReason: { unified: 'tool-calls', raw: undefined },
        usage,
        warnings: [],
      };
    }
    const told = steeringIn(prompt).join(' ');
    return {
      content: [{ type: 'text', text: `Report (${told}): the tides follow the moon.` }],
      finishReason: { unified: 'stop', raw: undefined },
      usage,
      warnings: [],
    };
  },
});

export const researcher = subAgentTool({
  name: 'researcher',
  description: 'Researches a question in the background; steer it with steer_background',
  input: z.object({ question: z.string() }),
  prompt: ({ question }) => `Research: ${question}`,
  model,
  tools: {
    search: tool({
      description: 'Reads a source',
      inputSchema: z.object({ n: z.number() }),
      execute: async ({ n }) => `source ${n}: the moon pulls the sea`,
    }),
  },
});
