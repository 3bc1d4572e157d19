import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Message, Task, TaskPushNotificationConfig } from '@a2a-js/sdk';
import { type Client, ClientFactory } from '@a2a-js/sdk/client';
import { agentCardHandler, jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express';
import type { Runtime } from '@baton/runtime';
import express from 'express';
import {
  type BatonA2aAgent,
  type BatonA2aAgentOptions,
  batonA2aAgent,
  skillMessage as messageOfSkill,
} from '../src/index.js';

/** An A2A agent on the runtime, served by the SDK's own Express handlers on a free port of loopback. */
export async function agentServer(
  runtime: Runtime,
  options: Omit<BatonA2aAgentOptions, 'card'> = {},
): Promise<{
  agent: BatonA2aAgent;
  client: Client;
  close: () => Promise<void>;
}> {
  const app = express();
  const server: Server = await new Promise((resolve) => {
    const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
  });
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const agent = batonA2aAgent(runtime, {
    card: {
      name: 'tides',
      description: 'Answers about the sea',
      version: '1.0.0',
      url: `${base}/a2a/jsonrpc`,
    },
    ...options,
  });
  await agent.ready;
  app.use(
    '/.well-known/agent-card.json',
    agentCardHandler({ agentCardProvider: async () => agent.agentCard }),
  );
  app.use(
    '/a2a/jsonrpc',
    jsonRpcHandler({ requestHandler: agent.requestHandler, userBuilder: UserBuilder.noAuthentication }),
  );
  const client = await new ClientFactory().createFromUrl(base);
  return {
    agent,
    client,
    close: async () => {
      agent.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** A user's message naming a skill with its arguments, in the tests' one context. */
export const skillMessage = (skill: string, args: unknown, contextId = 'context-1'): Message =>
  messageOfSkill(skill, args, { contextId });

/** Sends the message as a blocking request (the client waits), with a push config if given; gives the task it was answered with. */
export async function send(
  client: Client,
  message: Message,
  returnImmediately = false,
  taskPushNotificationConfig?: TaskPushNotificationConfig,
): Promise<Task> {
  const result = await client.sendMessage({
    tenant: '',
    message,
    configuration: {
      acceptedOutputModes: [],
      taskPushNotificationConfig,
      returnImmediately,
    },
    metadata: undefined,
  });
  if (!('status' in result))
    throw new Error(`answered with a message, not a task: ${JSON.stringify(result)}`);
  return result;
}

/** What a task's artifacts say, as text. */
export const artifactText = (task: Task) =>
  task.artifacts.flatMap((artifact) =>
    artifact.parts.flatMap((part) => (part.content?.$case === 'text' ? [part.content.value] : [])),
  );
