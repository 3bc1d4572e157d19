import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  type StreamResponse,
  StreamResponse as StreamResponseJson,
  type TaskPushNotificationConfig,
} from '@a2a-js/sdk';
import express from 'express';
import { Webhook } from 'standardwebhooks';

/** The secret the runtime's webhooks sign pushes with, in Standard Webhooks' form. */
export const PUSH_SECRET = `whsec_${randomBytes(32).toString('base64')}`;

/** A push as the receiver took it: its headers, and its body read back as the SDK's `StreamResponse`. */
export interface Push {
  headers: Record<string, string>;
  response: StreamResponse;
  /** What Standard Webhooks' own verifier made of its signature: the parsed body. */
  verified: unknown;
}

/** A client's push notification endpoint on loopback (Express), verifying each push's signature. */
export async function pushReceiver() {
  const pushes: Push[] = [];
  const app = express();
  app.post('/a2a/push', express.text({ type: '*/*' }), (request, response) => {
    const headers = Object.fromEntries(
      Object.entries(request.headers).map(([name, value]) => [name, String(value)]),
    );
    const body = String(request.body);
    pushes.push({
      headers,
      response: StreamResponseJson.fromJSON(JSON.parse(body)),
      verified: new Webhook(PUSH_SECRET).verify(body, headers),
    });
    response.sendStatus(200);
  });
  const server: Server = await new Promise((resolve) => {
    const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/a2a/push`;
  return {
    url,
    pushes,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** A push notification config for a task (the id left to the agent to make, when empty). */
export function pushConfig(
  url: string,
  fields: Partial<TaskPushNotificationConfig> = {},
): TaskPushNotificationConfig {
  return { tenant: '', id: '', taskId: '', url, token: '', authentication: undefined, ...fields };
}

/** The runtime's webhooks for pushes only: signed with the test's secret, loopback allowed. */
export const PUSH_WEBHOOKS = { webhooks: { secret: PUSH_SECRET, allow: { loopback: true } } };
