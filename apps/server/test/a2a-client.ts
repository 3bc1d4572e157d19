import type { Message, Task } from '@a2a-js/sdk';
import {
  type Client,
  ClientFactory,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
} from '@a2a-js/sdk/client';

/** The SDK's own client of the server at `base`, sending the bearer token with every request (the card's too). */
export async function a2aClientOf(base: string, token: string): Promise<Client> {
  const fetchImpl: typeof fetch = (input, init) => {
    const headers = new Headers(init?.headers);
    headers.set('authorization', `Bearer ${token}`);
    return fetch(input, { ...init, headers });
  };
  const factory = new ClientFactory({
    transports: [new JsonRpcTransportFactory({ fetchImpl })],
    cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
  });
  return factory.createFromUrl(base);
}

/** Sends the message as a blocking request; gives the task it was answered with. */
export async function sendTo(client: Client, message: Message): Promise<Task> {
  const result = await client.sendMessage({
    tenant: '',
    message,
    configuration: {
      acceptedOutputModes: [],
      taskPushNotificationConfig: undefined,
      returnImmediately: false,
    },
    metadata: undefined,
  });
  if (!('status' in result)) throw new Error('answered with a message, not a task');
  return result;
}
