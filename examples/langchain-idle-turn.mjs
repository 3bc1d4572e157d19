// A result that comes back while the user is idle starts a turn of its own, in a LangChain agent
// (`createAgent`, LangGraph underneath): `node examples/langchain-idle-turn.mjs` (after
// `npm ci && npm run build`). The model is LangChain's own kind (`BaseChatModel`), scripted to do
// what a model would.
import { defineTool } from '@baton/contracts';
import { batonLangChainTools, batonNotificationsMiddleware } from '@baton/langchain';
import { createRuntime } from '@baton/runtime';
import { idleTurns } from '@baton/runtime/bridge';
import { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { AIMessage, HumanMessage } from '@langchain/core/messages';
import { MemorySaver } from '@langchain/langgraph';
import { createAgent } from 'langchain';
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

/** A model that calls `research` when asked, and says what a result that came back says. */
class TidesModel extends BaseChatModel {
  calls = 0;
  _llmType() {
    return 'tides';
  }
  bindTools() {
    return this;
  }
  async _generate(messages) {
    const last = String(messages.at(-1)?.content ?? '');
    let message;
    if (last.includes('Task completed'))
      message = new AIMessage(`The research is back: ${/tides: (.+)/.exec(last)?.[1]}.`);
    else if (messages.at(-1)?.getType() === 'tool')
      message = new AIMessage('I am looking it up; I will tell you when it is back.');
    else
      message = new AIMessage({
        content: '',
        tool_calls: [
          { id: `call-${++this.calls}`, name: 'research', args: { topic: 'tides' }, type: 'tool_call' },
        ],
      });
    return { generations: [{ message, text: String(message.content) }] };
  }
}

const agent = createAgent({
  model: new TidesModel({}),
  tools: batonLangChainTools(runtime, { sessionId }),
  middleware: [batonNotificationsMiddleware(runtime, { sessionId })],
  checkpointer: new MemorySaver(),
});
const thread = { configurable: { thread_id: sessionId } };

/** One turn: the user's words, or none when a result came alone. */
async function turn(words) {
  console.log(words ? `user: ${words}` : '(a result came back while the user was idle: a turn of its own)');
  const result = await agent.invoke({ messages: words ? [new HumanMessage(words)] : [] }, thread);
  console.log(`assistant: ${result.messages.at(-1)?.content}`);
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
