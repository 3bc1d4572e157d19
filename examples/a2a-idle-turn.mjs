// A result that comes back while the user is idle is told at once, across A2A (Agent2Agent): an
// assistant agent hands the user's question to a Baton agent as a task, is answered `working`
// at once, and hears the end on the task's stream. `node examples/a2a-idle-turn.mjs` (after
// `npm ci && npm run build`). Both ends are `@a2a-js/sdk`'s own: its Express handlers and its client.

import { Role, TaskState } from '@a2a-js/sdk';
import { ClientFactory } from '@a2a-js/sdk/client';
import { agentCardHandler, jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express';
import { batonA2aAgent } from '@baton/a2a';
import { defineTool } from '@baton/contracts';
import { createRuntime } from '@baton/runtime';
import express from 'express';
import { z } from 'zod';

const research = defineTool({
  name: 'research',
  description: 'Looks up the tides; takes a while',
  input: z.object({ topic: z.string() }),
  execution: { mode: 'auto' },
  async execute({ topic }) {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    return `${topic}: high tide at 12:40`;
  },
});

const runtime = createRuntime({ tools: [research], inlineBudgetMs: 100 });
const app = express();
const server = await new Promise((resolve) => {
  const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
});
const base = `http://127.0.0.1:${server.address().port}`;
const agent = batonA2aAgent(runtime, {
  card: { name: 'tides', description: 'Answers about the sea', version: '1.0.0', url: `${base}/a2a/jsonrpc` },
});
await agent.ready;
app.use('/.well-known/agent-card.json', agentCardHandler({ agentCardProvider: async () => agent.agentCard }));
app.use(
  '/a2a/jsonrpc',
  jsonRpcHandler({ requestHandler: agent.requestHandler, userBuilder: UserBuilder.noAuthentication }),
);

// The user's assistant, another agent: it asks the tides agent with a task.
const tides = await new ClientFactory().createFromUrl(base);
console.log('user: When is high tide?');
const task = await tides.sendMessage({
  tenant: '',
  message: {
    messageId: crypto.randomUUID(),
    contextId: 'tides-1',
    taskId: '',
    role: Role.ROLE_USER,
    parts: [
      {
        content: { $case: 'data', value: { skill: 'research', arguments: { topic: 'tides' } } },
        metadata: undefined,
        filename: '',
        mediaType: '',
      },
    ],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  },
  // The assistant asked to block; past the budget it is answered `working` at once anyway.
  configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: false },
  metadata: undefined,
});
if (task.status.state === TaskState.TASK_STATE_WORKING)
  console.log('assistant: I am looking it up; I will tell you when it is back.');
for await (const { payload } of tides.resubscribeTask({ tenant: '', id: task.id })) {
  if (payload.$case !== 'artifactUpdate') continue;
  const text = payload.value.artifact.parts.find((part) => part.content.$case === 'text')?.content.value;
  console.log('(a result came back while the user was idle: a turn of its own)');
  console.log(`assistant: The research is back: ${/tides: (.+)/.exec(text)?.[1]}.`);
}
agent.close();
server.closeAllConnections();
server.close();
await runtime.close();
