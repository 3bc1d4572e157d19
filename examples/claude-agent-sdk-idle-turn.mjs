// A result that comes back while the user is idle starts a turn of its own, in a Claude Agent SDK
// conversation: `node examples/claude-agent-sdk-idle-turn.mjs` (after `npm ci && npm run build`).
// Claude Code, which the SDK runs, is pointed at a local stand-in for the Messages API
// (`ANTHROPIC_BASE_URL`), scripted to do what a model would.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { query } from '@anthropic-ai/claude-agent-sdk';
import { batonHooks, batonMcpServer, RESULT_TURN_PROMPT } from '@baton/claude-agent-sdk';
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

/** The Messages API's answer to a request, as a model would give it. */
function answer({ messages }) {
  const seen = JSON.stringify(messages);
  if (seen.includes('Task completed'))
    return { type: 'text', text: `The research is back: ${/tides: ([^"\\]+)/.exec(seen)?.[1]}.` };
  if (JSON.stringify(messages.at(-1)).includes('tool_result'))
    return { type: 'text', text: 'I am looking it up; I will tell you when it is back.' };
  return { type: 'tool_use', id: 'toolu_1', name: 'mcp__baton__research', input: { topic: 'tides' } };
}
const standIn = createServer(async (request, response) => {
  let body = '';
  for await (const chunk of request) body += chunk;
  const { model, messages } = JSON.parse(body);
  const block = answer({ messages });
  const usage = { input_tokens: 1, output_tokens: 1 };
  const events = [
    [
      'message_start',
      { message: { id: 'msg', type: 'message', role: 'assistant', model, content: [], usage } },
    ],
    [
      'content_block_start',
      {
        index: 0,
        content_block: block.type === 'text' ? { type: 'text', text: '' } : { ...block, input: {} },
      },
    ],
    [
      'content_block_delta',
      {
        index: 0,
        delta:
          block.type === 'text'
            ? { type: 'text_delta', text: block.text }
            : { type: 'input_json_delta', partial_json: JSON.stringify(block.input) },
      },
    ],
    ['content_block_stop', { index: 0 }],
    ['message_delta', { delta: { stop_reason: block.type === 'text' ? 'end_turn' : 'tool_use' }, usage }],
    ['message_stop', {}],
  ];
  response.writeHead(200, { 'content-type': 'text/event-stream' });
  response.end(
    events.map(([type, data]) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`).join(''),
  );
});
await new Promise((resolve) => standIn.listen(0, '127.0.0.1', resolve));
const home = mkdtempSync(join(tmpdir(), 'claude-home-'));

let conversation;
/** One turn: the user's words, or, when a result came alone, a prompt that asks for it. */
async function turn(words) {
  console.log(words ? `user: ${words}` : '(a result came back while the user was idle: a turn of its own)');
  for await (const message of query({
    prompt: words ?? RESULT_TURN_PROMPT,
    options: {
      cwd: home,
      settingSources: [],
      mcpServers: { baton: batonMcpServer(runtime, { sessionId }) },
      hooks: batonHooks(runtime, { sessionId }),
      allowedTools: ['mcp__baton__research'],
      ...(conversation ? { resume: conversation } : {}),
      env: {
        ...process.env,
        CLAUDE_CONFIG_DIR: home,
        ANTHROPIC_BASE_URL: `http://127.0.0.1:${standIn.address().port}`,
        ANTHROPIC_API_KEY: 'example',
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      },
    },
  })) {
    if (message.type === 'result') {
      conversation = message.session_id;
      console.log(`assistant: ${message.result}`);
    }
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
standIn.close();
rmSync(home, { recursive: true, force: true });
