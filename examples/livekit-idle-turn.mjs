// A result that comes back while the user is idle is spoken at once, in a LiveKit voice session:
// `node examples/livekit-idle-turn.mjs` (after `npm ci && npm run build`). The session runs with no
// room (text in and out, as LiveKit's own tests run one), and its model is LiveKit's own kind
// (`llm.LLM`), scripted to do what a model would.

import { defineTool } from '@baton/contracts';
import { batonLiveKitResults, batonLiveKitTools } from '@baton/livekit';
import { createRuntime } from '@baton/runtime';
import { idleTurns } from '@baton/runtime/bridge';
import { DEFAULT_API_CONNECT_OPTIONS, initializeLogger, llm, voice } from '@livekit/agents';
import { z } from 'zod';

initializeLogger({ pretty: false, level: 'silent' });

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
const sessionId = 'call-room-1';

/** A model that calls `research` when asked, and says what a result that came back says. */
class TidesModel extends llm.LLM {
  calls = 0;
  label() {
    return 'tides';
  }
  chat({ chatCtx, connOptions = DEFAULT_API_CONNECT_OPTIONS }) {
    const model = this;
    return new (class extends llm.LLMStream {
      async run() {
        const last = chatCtx.items.at(-1);
        const text = last?.type === 'message' ? (last.textContent ?? '') : '';
        const say = (content) => this.queue.put({ id: 'tides', delta: { role: 'assistant', content } });
        if (text.includes('Task completed')) say(`The research is back: ${/tides: (.+)/.exec(text)?.[1]}.`);
        else if (last?.type === 'function_call_output')
          say('I am looking it up; I will tell you when it is back.');
        else {
          const call = llm.FunctionCall.create({
            callId: `call-${++model.calls}`,
            name: 'research',
            args: '{"topic":"tides"}',
          });
          this.queue.put({ id: 'tides', delta: { role: 'assistant', toolCalls: [call] } });
        }
      }
    })(this, { chatCtx, connOptions });
  }
}

const agent = new voice.Agent({
  instructions: 'Answer about the sea.',
  tools: batonLiveKitTools(runtime, { sessionId }),
});
const session = new voice.AgentSession({ llm: new TidesModel() });
session.on(voice.AgentSessionEventTypes.ConversationItemAdded, ({ item }) => {
  if (item.type === 'message' && item.role === 'assistant') console.log(`assistant: ${item.textContent}`);
});
await session.start({ agent });
// The bridge puts each result into the session by its scheduling: this one (when idle) is spoken
// as soon as neither the user nor the agent is speaking.
const results = batonLiveKitResults(runtime, session, { sessionId });
const spoken = new Promise((resolve) => {
  const watching = idleTurns(runtime, { sessionId }).subscribe(() => {
    watching.unsubscribe();
    console.log('(a result came back while the user was idle: a turn of its own)');
    session.on(voice.AgentSessionEventTypes.ConversationItemAdded, ({ item }) => {
      if (item.type === 'message' && item.role === 'assistant') resolve();
    });
  });
});
console.log('user: When is high tide?');
await session.run({ userInput: 'When is high tide?' }).wait();
await spoken;
results.close();
await session.close();
await runtime.close();
