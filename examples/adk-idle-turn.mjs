// A result that comes back while the user is idle starts a turn of its own, in a Google ADK agent:
// `node examples/adk-idle-turn.mjs` (after `npm ci && npm run build`). The model is ADK's own kind
// (`BaseLlm`), scripted to do what a model would.
import { batonAdkResults, batonAdkTools } from '@baton/adk';
import { defineTool } from '@baton/contracts';
import { createRuntime } from '@baton/runtime';
import { idleTurns } from '@baton/runtime/bridge';
import { BaseLlm, InMemoryRunner, LlmAgent } from '@google/adk';
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

/** A model that calls `research` when asked, and says what a result that came back says. */
class TidesModel extends BaseLlm {
  calls = 0;
  async *generateContentAsync({ contents }) {
    const last = contents.at(-1)?.parts?.find((part) => part.functionResponse)?.functionResponse;
    const text = (value) => ({ role: 'model', parts: [{ text: value }] });
    let content;
    if (last?.response?.output?.status === 'completed')
      content = text(`The research is back: ${/tides: (.+)/.exec(last.response.output.result)?.[1]}.`);
    else if (last) content = text('I am looking it up; I will tell you when it is back.');
    else
      content = {
        role: 'model',
        parts: [{ functionCall: { id: `call-${++this.calls}`, name: 'research', args: { topic: 'tides' } } }],
      };
    yield { content, turnComplete: true };
  }
  async connect() {
    throw new Error('no live connection here');
  }
}

const agent = new LlmAgent({
  name: 'assistant',
  model: new TidesModel({ model: 'tides' }),
  instruction: 'Answer about the sea.',
  tools: batonAdkTools(runtime),
});
const runner = new InMemoryRunner({ agent, appName: 'tides' });
const userId = 'ada';
const { id: sessionId } = await runner.sessionService.createSession({ appName: 'tides', userId });

/** Prints what the agent says in a run. */
async function said(events) {
  for await (const event of events) {
    const text = event.content?.parts?.map((part) => part.text ?? '').join('');
    if (event.author === 'assistant' && text) console.log(`assistant: ${text}`);
  }
}

// The app is told of each result as it is stored (from any process on PostgreSQL), and, the agent
// being idle, gives it back as the function response of its call: a run of its own.
const resultTurn = new Promise((resolve) => {
  const watching = idleTurns(runtime, { sessionId }).subscribe(() => {
    watching.unsubscribe();
    console.log('(a result came back while the user was idle: a turn of its own)');
    said(batonAdkResults(runtime, runner, { userId, sessionId })).then(resolve);
  });
});
console.log('user: When is high tide?');
await said(
  runner.runAsync({
    userId,
    sessionId,
    newMessage: { role: 'user', parts: [{ text: 'When is high tide?' }] },
  }),
);
await resultTurn;
await runtime.close();
