// A result that comes back while the user is idle starts a turn of its own, in a Mastra agent:
// `node examples/mastra-idle-turn.mjs` (after `npm ci && npm run build`). The model is the AI SDK's
// mock (Mastra runs AI SDK models), scripted to do what a model would.
import { defineTool } from '@baton/contracts';
import { batonMastraTools, batonNotificationsProcessor } from '@baton/mastra';
import { createRuntime } from '@baton/runtime';
import { idleTurns } from '@baton/runtime/bridge';
import { Agent } from '@mastra/core/agent';
import { MockLanguageModelV3 } from 'ai/test';
import { z } from 'zod';

const research = defineTool({
  name: 'research',
  description: 'Looks up the tides; takes a while',
  input: z.object({ topic: z.string() }),
  execution: { mode: 'auto' },
  async execute({ topic }) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    return `${topic}: high tide at 12:40`;
  },
});

const runtime = createRuntime({ tools: [research], inlineBudgetMs: 100 });
const sessionId = 'chat-1';

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};
let calls = 0;
/** A model that calls `research` when asked, and says what a result that came back says. */
const model = new MockLanguageModelV3({
  async doGenerate({ prompt }) {
    const last = JSON.stringify(prompt.at(-1));
    const text = (value) => ({
      content: [{ type: 'text', text: value }],
      finishReason: { unified: 'stop' },
      usage,
      warnings: [],
    });
    if (last.includes('Task completed'))
      return text(`The research is back: ${/tides: ([^"\\]+)/.exec(last)?.[1]}.`);
    if (prompt.at(-1)?.role === 'tool') return text('I am looking it up; I will tell you when it is back.');
    return {
      content: [
        {
          type: 'tool-call',
          toolCallId: `call-${++calls}`,
          toolName: 'research',
          input: JSON.stringify({ topic: 'tides' }),
        },
      ],
      finishReason: { unified: 'tool-calls' },
      usage,
      warnings: [],
    };
  },
});

const agent = new Agent({
  id: 'assistant',
  name: 'assistant',
  instructions: 'Answer about the sea.',
  model,
  tools: batonMastraTools(runtime, { sessionId }),
  inputProcessors: [batonNotificationsProcessor(runtime, { sessionId })],
});

let history = [];
/** One turn: the user's words, or none when a result came alone. */
async function turn(words) {
  console.log(words ? `user: ${words}` : '(a result came back while the user was idle: a turn of its own)');
  const result = await agent.generate([...history, ...(words ? [{ role: 'user', content: words }] : [])]);
  history = result.messages;
  console.log(`assistant: ${result.text}`);
}

// The app is told of each result as it is stored (from any process on PostgreSQL).
const resultTurn = new Promise((resolve) => {
  const watching = idleTurns(runtime, { sessionId }).subscribe(() => {
    watching.unsubscribe();
    turn(undefined).then(resolve);
  });
});
await turn('When is high tide?');
await resultTurn;
await runtime.close();
