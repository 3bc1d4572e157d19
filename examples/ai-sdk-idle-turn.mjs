// A result that comes back while the user is idle starts a turn of its own, in a Vercel AI SDK
// loop: `node examples/ai-sdk-idle-turn.mjs` (after `npm ci && npm run build`). The model is the
// AI SDK's own test double, scripted to do what a model would.
import { batonNotifications, batonTools, responseMessagesOf } from '@baton/ai-sdk';
import { defineTool } from '@baton/contracts';
import { createRuntime } from '@baton/runtime';
import { idleTurns } from '@baton/runtime/bridge';
import { generateText, stepCountIs } from 'ai';
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
const tools = batonTools(runtime, { sessionId });
const notifications = batonNotifications(runtime, { sessionId });

/** What the model answers to the last thing it was shown. */
function reply(prompt) {
  const last = JSON.stringify(prompt.at(-1));
  if (last.includes('Task completed'))
    return { text: `The research is back: ${/tides: ([^"\\]+)/.exec(last)?.[1]}.` };
  if (prompt.at(-1)?.role === 'tool') return { text: 'I am looking it up; I will tell you when it is back.' };
  return { call: { toolName: 'research', input: JSON.stringify({ topic: 'tides' }) } };
}
const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
};
let calls = 0;
const model = new MockLanguageModelV3({
  doGenerate: async ({ prompt }) => {
    const next = reply(prompt);
    return next.call
      ? {
          content: [{ type: 'tool-call', toolCallId: `call-${++calls}`, ...next.call }],
          finishReason: { unified: 'tool-calls', raw: undefined },
          usage,
          warnings: [],
        }
      : {
          content: [{ type: 'text', text: next.text }],
          finishReason: { unified: 'stop', raw: undefined },
          usage,
          warnings: [],
        };
  },
});

let history = [];
/** One turn of the conversation: with the user's words, or with none when a result came. */
async function turn(words) {
  if (words) {
    history.push({ role: 'user', content: words });
    console.log(`user: ${words}`);
  } else console.log('(a result came back while the user was idle: a turn of its own)');
  const result = await generateText({
    model,
    tools,
    messages: history,
    prepareStep: notifications.prepareStep,
    onStepFinish: notifications.onStepFinish,
    stopWhen: stepCountIs(5),
  });
  history = notifications.history([...history, ...responseMessagesOf(result)]);
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
