// A result that comes back while the user is idle starts a run of its own, in an AG-UI thread:
// `node examples/ag-ui-idle-turn.mjs` (after `npm ci && npm run build`). The agent is served over
// HTTP and SSE by `agUiHandler`; the front end is AG-UI's own `HttpAgent`; the agent's model is
// scripted to do what a model would.

import { createServer } from 'node:http';
import { HttpAgent } from '@ag-ui/client';
import { agUiHandler } from '@baton/ag-ui';
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

/** The agent's model: it looks the tides up when asked, and says what comes back. */
async function model({ messages }) {
  const last = messages.at(-1);
  if (last.role === 'user')
    return { toolCalls: [{ id: 'call-1', name: 'research', args: { topic: 'tides' } }] };
  if (last.content.includes('continuing in the background'))
    return { text: 'I am looking it up; I will tell you when it is back.' };
  return { text: `The research is back: ${/tides: (.+)/.exec(last.content)?.[1]}.` };
}

const handler = agUiHandler(runtime, { model });
const server = createServer((req, res) => void handler(req, res));
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));

const threadId = 'tides-thread';
const frontEnd = new HttpAgent({ url: `http://127.0.0.1:${server.address().port}/agent`, threadId });
const print = {
  onTextMessageEndEvent: ({ textMessageBuffer }) => console.log(`assistant: ${textMessageBuffer}`),
};

// The thread's results worth a run of their own: the front end is told (here, in the same
// process) and starts one, which the result comes back in.
const backAgain = new Promise((resolve) => {
  const watching = idleTurns(runtime, { sessionId: threadId }).subscribe(() => {
    watching.unsubscribe();
    console.log('(a result came back while the user was idle: a turn of its own)');
    frontEnd.runAgent({}, print).then(resolve);
  });
});

console.log('user: When is high tide?');
frontEnd.addMessage({ id: 'user-1', role: 'user', content: 'When is high tide?' });
await frontEnd.runAgent({}, print);
await backAgain;
server.close();
await runtime.close();
