import type { AddressInfo } from 'node:net';
import type { FunctionResponse, LiveClientMessage, LiveServerMessage, Tool } from '@google/genai';
import { type WebSocket, WebSocketServer } from 'ws';

/** A server message as it travels: the SDK's `LiveServerMessage` without its helper getters. */
export type LiveServerWire = Omit<LiveServerMessage, 'text' | 'data'>;

/**
 * A local stand-in for the Gemini Live endpoint: it speaks the protocol's messages as the SDK's
 * own types define them (`LiveClientMessage` in, `LiveServerMessage` out). It answers each setup
 * with `setupComplete`, keeps what each connection sent, and lets a test send, and drop the socket.
 * It reads a function's behaviour as Live models from 3.8 on do: an omitted `behavior` is
 * `NON_BLOCKING` (asynchronous execution is their default function calling mode).
 */
export async function fakeLiveServer() {
  const server = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  await new Promise<void>((resolve) => server.once('listening', resolve));
  const connections: Array<{ socket: WebSocket; received: LiveClientMessage[] }> = [];
  let heard: () => void = () => {};
  server.on('connection', (socket) => {
    const connection = { socket, received: [] as LiveClientMessage[] };
    connections.push(connection);
    socket.on('message', (data) => {
      const message = JSON.parse(String(data)) as LiveClientMessage;
      connection.received.push(message);
      if (message.setup) socket.send(JSON.stringify({ setupComplete: {} } satisfies LiveServerWire));
      heard();
    });
  });
  const current = () => {
    const connection = connections.at(-1);
    if (!connection) throw new Error('no connection to the fake Live server');
    return connection;
  };
  /** Every function response the client sent, over all its connections, in order. */
  const responses = (): FunctionResponse[] =>
    connections.flatMap(({ received }) =>
      received.flatMap((message) => {
        const sent = message.toolResponse?.functionResponses;
        return sent === undefined ? [] : Array.isArray(sent) ? sent : [sent];
      }),
    );
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    connections,
    responses,
    /** The setup the `n`th connection sent (from 1). */
    setupOf: (n: number) => connections[n - 1]?.received.find((message) => message.setup)?.setup,
    /** Each function the `n`th connection declared, with the behaviour the model gives it. */
    behaviorsOf(n: number): Array<[string | undefined, string]> {
      const tools = (connections[n - 1]?.received.find((message) => message.setup)?.setup?.tools ??
        []) as Tool[];
      return tools
        .flatMap((tool) => tool.functionDeclarations ?? [])
        .map((declared) => [declared.name, declared.behavior ?? 'NON_BLOCKING']);
    },
    send(message: LiveServerWire): void {
      current().socket.send(JSON.stringify(message));
    },
    /** Closes the current socket from the server's side, as a network drop or a GoAway does. */
    drop(): void {
      current().socket.terminate();
    },
    /** Resolves once `check` holds of what the client sent. */
    async until<T>(check: () => T | undefined): Promise<T> {
      for (;;) {
        const found = check();
        if (found !== undefined && found !== false) return found;
        await new Promise<void>((resolve) => {
          heard = resolve;
          setTimeout(resolve, 50);
        });
      }
    },
    close: () => {
      for (const { socket } of connections) socket.terminate();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
