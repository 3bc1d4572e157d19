// A result that comes back while the user is idle is told at once, in an ACP session (the Agent
// Client Protocol, an editor and a coding agent): `node examples/acp-idle-turn.mjs` (after
// `npm ci && npm run build`). The agent and the editor are the ACP SDK's own `agent()` and
// `client()` apps over an in-memory stream; the agent's model is scripted to do what a model would.

import { agent, client, ndJsonStream, PROTOCOL_VERSION } from '@agentclientprotocol/sdk';
import { batonAcpSession } from '@baton/acp';
import { defineTool } from '@baton/contracts';
import { createRuntime } from '@baton/runtime';
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
const sessions = new Map();
const say = (context, sessionId, text) =>
  context.notify('session/update', {
    sessionId,
    update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text } },
  });

// The coding agent: each prompt is a turn of its model, whose tool calls run through Baton.
const codingAgent = agent({ name: 'tides-agent' })
  .onRequest('initialize', () => ({ protocolVersion: PROTOCOL_VERSION }))
  .onRequest('session/new', ({ client: context }) => {
    const sessionId = 'tides-1';
    // `when_idle`: a result that comes back between turns is reported at once, and the agent's
    // model gets it in a turn of its own.
    const session = batonAcpSession(runtime, {
      client: context,
      sessionId,
      results: 'when_idle',
      onResults: async (results) => {
        for (const result of results)
          await say(context, sessionId, `The research is back: ${/tides: (.+)/.exec(result.text)?.[1]}.`);
      },
    });
    sessions.set(sessionId, session);
    return { sessionId };
  })
  .onRequest('session/prompt', async ({ params, client: context }) => {
    const session = sessions.get(params.sessionId);
    await session.startTurn();
    const { reply } = await session.runTool({
      toolCallId: 'call-1',
      name: 'research',
      args: { topic: 'tides' },
    });
    if (reply.status === 'backgrounded')
      await say(context, params.sessionId, 'I am looking it up; I will tell you when it is back.');
    await session.endTurn();
    return { stopReason: 'end_turn' };
  });

// The editor: it shows what the agent says, and sees the tool call end while the user is idle.
const toAgent = new TransformStream();
const toEditor = new TransformStream();
codingAgent.connect(ndJsonStream(toEditor.writable, toAgent.readable));
let prompting = false;
let told;
const toldAgain = new Promise((resolve) => {
  told = resolve;
});
const editor = client({ name: 'editor' })
  .onNotification('session/update', ({ params: { update } }) => {
    if (update.sessionUpdate === 'agent_message_chunk') {
      console.log(`assistant: ${update.content.text}`);
      if (!prompting) told();
    }
    if (update.sessionUpdate === 'tool_call_update' && update.status === 'completed' && !prompting)
      console.log('(a result came back while the user was idle: a turn of its own)');
  })
  .connect(ndJsonStream(toAgent.writable, toEditor.readable));
await editor.agent.request('initialize', { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} });
const { sessionId } = await editor.agent.request('session/new', { cwd: process.cwd(), mcpServers: [] });
console.log('user: When is high tide?');
prompting = true;
await editor.agent.request('session/prompt', {
  sessionId,
  prompt: [{ type: 'text', text: 'When is high tide?' }],
});
prompting = false;
await toldAgain;
sessions.get(sessionId).close();
editor.close();
await runtime.close();
