import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type BaseEvent, HttpAgent, type Message } from '@ag-ui/client';
import type { Runtime } from '@baton/runtime';
import { type AgUiModel, agUiHandler } from '../src/index.js';

/** What the model asks for in a user message of the tests: one tool call, or none. */
export interface ScriptedTurn {
  call?: { tool: string; args: unknown; id: string };
}

const textOf = (message: Message | undefined): string =>
  message === undefined || !('content' in message) || message.content === undefined
    ? ''
    : typeof message.content === 'string'
      ? message.content
      : JSON.stringify(message.content);

/**
 * A model scripted by the thread: a user message is a `ScriptedTurn` as JSON, and a tool result
 * (an answer within the run, or one that came back from the background) has it say `told: ...`.
 */
export const scriptedModel: AgUiModel = async ({ messages }) => {
  const last = messages.at(-1);
  if (last?.role === 'tool') return { text: `told: ${textOf(last)}` };
  const turn = JSON.parse(textOf(last) || '{}') as ScriptedTurn;
  if (turn.call === undefined) return { text: 'nothing to do' };
  return { toolCalls: [{ id: turn.call.id, name: turn.call.tool, args: turn.call.args }] };
};

/** Reads and parses a JSON body into `req.body` before the handler, as Express's `express.json()` does. */
async function parsedFirst(req: IncomingMessage): Promise<void> {
  let text = '';
  for await (const chunk of req) text += chunk;
  (req as IncomingMessage & { body?: unknown }).body = JSON.parse(text);
}

/**
 * The agent's server: AG-UI over HTTP and SSE, on a free port of loopback; with `bodyParser`, a
 * JSON body parser on the route runs first, as an Express app's often does.
 */
export async function agentServer(
  runtime: Runtime,
  { bodyParser = false }: { bodyParser?: boolean } = {},
): Promise<{ url: string; close: () => Promise<void> }> {
  const handler = agUiHandler(runtime, { model: scriptedModel });
  const server: Server = createServer((req, res) => {
    (bodyParser ? parsedFirst(req) : Promise.resolve())
      .then(() => handler(req, res))
      .catch((error: unknown) => {
        res.destroy(error instanceof Error ? error : new Error(String(error)));
      });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/agent`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A front end: `@ag-ui/client`'s own `HttpAgent` on one thread, keeping every event it was sent. */
export function frontEnd(url: string, threadId = 'thread-1') {
  const agent = new HttpAgent({ url, threadId });
  const events: BaseEvent[] = [];
  const run = async (turn?: ScriptedTurn, resume?: Parameters<HttpAgent['runAgent']>[0]) => {
    if (turn !== undefined)
      agent.addMessage({ id: crypto.randomUUID(), role: 'user', content: JSON.stringify(turn) });
    const from = events.length;
    await agent.runAgent(resume ?? {}, { onEvent: ({ event }) => void events.push(event) });
    return events.slice(from);
  };
  return {
    agent,
    events,
    run,
    /** The `TOOL_CALL_RESULT`s for one tool call, in all the runs. */
    resultsOf: (toolCallId: string) =>
      events.filter(
        (event) =>
          event.type === 'TOOL_CALL_RESULT' &&
          (event as unknown as { toolCallId: string }).toolCallId === toolCallId,
      ) as unknown as { content: string; messageId: string }[],
    /** What the assistant said, in the thread as the client keeps it. */
    said: () =>
      agent.messages
        .filter((message) => message.role === 'assistant')
        .map(textOf)
        .filter(Boolean),
    activity: (toolCallId: string) =>
      agent.messages.find(
        (message) => message.role === 'activity' && message.id === `activity-${toolCallId}`,
      ) as { content: Record<string, unknown> } | undefined,
  };
}
