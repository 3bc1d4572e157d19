// A result that comes back while the user is idle starts a turn of its own, in an OpenAI Agents
// SDK loop: `node examples/openai-agents-idle-turn.mjs` (after `npm ci && npm run build`). The
// model is a `Model` of the example's own, scripted to do what a model would.
import { defineTool } from '@baton/contracts';
import { batonAgentNotifications, batonAgentTools } from '@baton/openai-agents';
import { createRuntime } from '@baton/runtime';
import { idleTurns } from '@baton/runtime/bridge';
import { Agent, Runner, Usage } from '@openai/agents';
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

/** A model that calls `research` when asked, and says what a result that came back says. */
const model = {
  async getResponse({ input }) {
    const last = JSON.stringify(Array.isArray(input) ? input.at(-1) : input);
    const say = (text) => ({
      type: 'message',
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text }],
    });
    let output;
    if (last.includes('Task completed'))
      output = say(`The research is back: ${/tides: ([^"\\]+)/.exec(last)?.[1]}.`);
    else if (last.includes('function_call_result'))
      output = say('I am looking it up; I will tell you when it is back.');
    else
      output = {
        type: 'function_call',
        callId: `call-${++calls}`,
        name: 'research',
        arguments: JSON.stringify({ topic: 'tides' }),
        status: 'completed',
      };
    return { usage: new Usage(), output: [output] };
  },
  // biome-ignore lint/correctness/useYield: this loop never streams.
  async *getStreamedResponse() {
    throw new Error('this example does not stream');
  },
};

const agent = new Agent({ name: 'Tides', model, tools: batonAgentTools(runtime, { sessionId }) });
const notifications = batonAgentNotifications(runtime, { sessionId });
const runner = new Runner({
  callModelInputFilter: notifications.callModelInputFilter,
  tracingDisabled: true,
});

let history = [];
/** One turn: the results that came first, then the user's words (none when a result came alone). */
async function turn(words) {
  console.log(words ? `user: ${words}` : '(a result came back while the user was idle: a turn of its own)');
  const input = [
    ...history,
    ...(await notifications.turnInput()),
    ...(words ? [{ role: 'user', content: words }] : []),
  ];
  const result = await runner.run(agent, input);
  history = await notifications.history(result.history);
  console.log(`assistant: ${result.finalOutput}`);
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
