// A result that comes back while the user is idle starts a turn of its own, in an Anthropic
// Messages loop: `node examples/anthropic-idle-turn.mjs` (after `npm ci && npm run build`). The
// SDK's own client talks to a stand-in for the Messages API, scripted to do what a model would.
import Anthropic from '@anthropic-ai/sdk';
import { anthropicNotifications, anthropicTools, handleToolUses } from '@baton/anthropic';
import { defineTool } from '@baton/contracts';
import { createRuntime } from '@baton/runtime';
import { idleTurns } from '@baton/runtime/bridge';
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
let calls = 0;

/** The Messages API's answer to a request, as a model would give it. */
function answer({ messages }) {
  const last = JSON.stringify(messages.at(-1));
  const text = (value) => [{ type: 'text', text: value, citations: null }];
  if (last.includes('Task completed'))
    return text(`The research is back: ${/tides: ([^"\\]+)/.exec(last)?.[1]}.`);
  if (last.includes('tool_result')) return text('I am looking it up; I will tell you when it is back.');
  return [{ type: 'tool_use', id: `toolu_${++calls}`, name: 'research', input: { topic: 'tides' } }];
}
const client = new Anthropic({
  apiKey: 'example',
  maxRetries: 0,
  fetch: async (_url, init) => {
    const content = answer(JSON.parse(String(init?.body)));
    const stop_reason = content[0].type === 'tool_use' ? 'tool_use' : 'end_turn';
    const message = {
      id: 'msg',
      type: 'message',
      role: 'assistant',
      model: 'claude',
      content,
      stop_reason,
      stop_sequence: null,
      usage: { input_tokens: 1, output_tokens: 1 },
    };
    return new Response(JSON.stringify(message), { headers: { 'content-type': 'application/json' } });
  },
});

const messages = [];
const notifications = anthropicNotifications(runtime, { sessionId });
/** One turn: the results that came first, then the user's words (none when a result came alone). */
async function turn(words) {
  console.log(words ? `user: ${words}` : '(a result came back while the user was idle: a turn of its own)');
  const due = await notifications.blocks({ idle: true });
  messages.push({ role: 'user', content: [...due, ...(words ? [{ type: 'text', text: words }] : [])] });
  for (;;) {
    const message = await client.messages.create({
      model: 'claude',
      max_tokens: 1024,
      tools: anthropicTools(runtime),
      messages,
    });
    await notifications.confirm();
    messages.push({ role: 'assistant', content: message.content });
    if (message.stop_reason !== 'tool_use') {
      console.log(`assistant: ${message.content.map((block) => block.text ?? '').join('')}`);
      return;
    }
    messages.push({
      role: 'user',
      content: [
        ...(await handleToolUses(runtime, message, { sessionId })),
        ...(await notifications.blocks({ idle: false })),
      ],
    });
  }
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
