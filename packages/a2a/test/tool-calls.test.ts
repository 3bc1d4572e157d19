import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type AgentCard, type Message, Role, TaskState } from '@a2a-js/sdk';
import { ClientFactory } from '@a2a-js/sdk/client';
import {
  AgentEvent,
  type AgentExecutor,
  DefaultRequestHandler,
  type ExecutionEventBus,
  InMemoryTaskStore,
  type RequestContext,
} from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express';
import { notificationText, replyText } from '@baton/contracts';
import type { Runtime } from '@baton/runtime';
import { AGENT_BUDGET_MS, agentLoopRuntime, eventually, nextStart } from '@baton/test-support';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { taskToolCalls } from '../src/index.js';
import { send } from './agent-server.js';

const closing: (() => unknown)[] = [];
afterEach(async () => {
  for (const close of closing.splice(0)) await close();
});

const textOf = (message: Message | undefined) =>
  (message?.parts ?? [])
    .flatMap((part) => (part.content?.$case === 'text' ? [part.content.value] : []))
    .join('\n');

/**
 * An agent of one's own whose model, scripted, asks for `research` on the topic the user names,
 * and answers with what it was told: a result that came in the background first, else the reply.
 */
class ResearchingAgent implements AgentExecutor {
  constructor(readonly runtime: Runtime) {}

  async execute(context: RequestContext, bus: ExecutionEventBus): Promise<void> {
    const { taskId, contextId } = context;
    bus.publish(
      AgentEvent.task({
        id: taskId,
        contextId,
        status: {
          state: TaskState.TASK_STATE_SUBMITTED,
          message: undefined,
          timestamp: new Date().toISOString(),
        },
        artifacts: [],
        history: [context.userMessage],
        metadata: undefined,
      }),
    );
    const tools = taskToolCalls(this.runtime, context, bus);
    const came = await tools.delivery.take({ idle: true });
    const topic = textOf(context.userMessage);
    const answer =
      came.length > 0
        ? came.map(notificationText).join('\n')
        : replyText(await tools.call({ name: 'research', args: { topic }, callId: `model-call-${topic}` }))
            .text;
    const reply: Message = {
      messageId: crypto.randomUUID(),
      contextId,
      taskId,
      role: Role.ROLE_AGENT,
      parts: [
        {
          content: { $case: 'text', value: String(answer) },
          metadata: undefined,
          filename: '',
          mediaType: '',
        },
      ],
      metadata: undefined,
      extensions: [],
      referenceTaskIds: [],
    };
    bus.publish(
      AgentEvent.statusUpdate({
        taskId,
        contextId,
        status: {
          state: TaskState.TASK_STATE_COMPLETED,
          message: reply,
          timestamp: new Date().toISOString(),
        },
        metadata: undefined,
      }),
    );
    bus.finished();
    // The model's answer is in the task: the results it was given are never given again.
    await tools.delivery.confirm();
  }

  async cancelTask(): Promise<void> {}
}

async function setUp() {
  const suite = agentLoopRuntime();
  const app = express();
  const server: Server = await new Promise((resolve) => {
    const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
  });
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const card: AgentCard = {
    name: 'assistant',
    description: 'An agent with a model of its own',
    version: '1.0.0',
    supportedInterfaces: [
      { url: `${base}/a2a/jsonrpc`, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' },
    ],
    provider: undefined,
    capabilities: { streaming: true, pushNotifications: false, extensions: [] },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [],
    signatures: [],
  };
  const requestHandler = new DefaultRequestHandler(
    card,
    new InMemoryTaskStore(),
    new ResearchingAgent(suite.runtime),
  );
  app.use('/.well-known/agent-card.json', agentCardHandler({ agentCardProvider: async () => card }));
  app.use('/a2a/jsonrpc', jsonRpcHandler({ requestHandler, userBuilder: UserBuilder.noAuthentication }));
  const client = await new ClientFactory().createFromUrl(base);
  closing.push(
    () => suite.runtime.close(),
    () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(resolve));
    },
  );
  return { ...suite, client };
}

const userSays = (text: string): Message => ({
  messageId: crypto.randomUUID(),
  contextId: 'context-1',
  taskId: '',
  role: Role.ROLE_USER,
  parts: [
    { content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' },
  ],
  metadata: undefined,
  extensions: [],
  referenceTaskIds: [],
});

describe('taskToolCalls: an A2A agent’s own model’s tool calls through Baton', () => {
  it('answers within the budget with the tool’s result, the call told in the task', async () => {
    const suite = await setUp();
    suite.gateOf('tides').resolve('tides: high at noon');
    const told: unknown[] = [];
    let ended: Message | undefined;
    const request = { tenant: '', message: userSays('tides'), configuration: undefined, metadata: undefined };
    for await (const { payload } of suite.client.sendMessageStream(request)) {
      if (payload?.$case !== 'statusUpdate') continue;
      const { state, message } = payload.value.status ?? {};
      if (state === TaskState.TASK_STATE_WORKING)
        told.push(
          ...(message?.parts ?? []).flatMap((part) =>
            part.content?.$case === 'data' ? [part.content.value] : [],
          ),
        );
      if (state === TaskState.TASK_STATE_COMPLETED) ended = message;
    }
    expect(told).toEqual([{ toolCall: { id: 'model-call-tides', name: 'research', status: 'succeeded' } }]);
    expect(textOf(ended)).toBe('tides: high at noon');
    expect((await suite.runtime.get('model-call-tides'))?.sessionId).toBe('a2a-agent:context-1');
  });

  it('does not hold the task for a call past its budget; its end comes to the context’s next task, once', async () => {
    const suite = await setUp();
    const started = nextStart(suite.runtime);
    const answering = send(suite.client, userSays('waves'));
    await started;
    suite.clock.increment(AGENT_BUDGET_MS);
    const first = await answering;
    expect(first.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(textOf(first.status?.message)).toMatch(/continuing in the background/);

    suite.gateOf('waves').resolve('waves: calm');
    await eventually(
      async () => (await suite.runtime.get('model-call-waves'))?.status === 'succeeded',
      'the call ends in the background',
    );
    const next = await send(suite.client, userSays('anything new?'));
    expect(textOf(next.status?.message)).toContain('waves: calm');
    expect(next.contextId).toBe(first.contextId);

    suite.gateOf('anything new?').resolve('nothing');
    const after = await send(suite.client, userSays('anything new?'));
    expect(textOf(after.status?.message)).not.toContain('waves: calm');
  });
});
