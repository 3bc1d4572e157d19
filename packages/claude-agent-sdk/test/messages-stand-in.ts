import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A content block of the model's answer. */
export type AnswerBlock =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> };

/** A request to the Messages API, as far as the tests read it. */
export interface MessagesRequest {
  model: string;
  stream?: boolean;
  messages: { role: 'user' | 'assistant'; content: string | Record<string, unknown>[] }[];
}

/** Decides the model's answer to a request, as a model would. */
export type Answering = (request: MessagesRequest) => AnswerBlock[] | Promise<AnswerBlock[]>;

/** What a stand-in sends of an answer, streamed (server-sent events) as the Messages API does. */
function streamed(model: string, blocks: AnswerBlock[]): string {
  const events: string[] = [];
  const send = (event: string, data: Record<string, unknown>) =>
    events.push(`event: ${event}\ndata: ${JSON.stringify({ type: event, ...data })}\n\n`);
  const usage = { input_tokens: 1, output_tokens: 1 };
  send('message_start', {
    message: {
      id: 'msg_stand_in',
      type: 'message',
      role: 'assistant',
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage,
    },
  });
  blocks.forEach((block, index) => {
    if (block.type === 'text') {
      send('content_block_start', { index, content_block: { type: 'text', text: '' } });
      send('content_block_delta', { index, delta: { type: 'text_delta', text: block.text } });
    } else {
      send('content_block_start', { index, content_block: { ...block, input: {} } });
      send('content_block_delta', {
        index,
        delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) },
      });
    }
    send('content_block_stop', { index });
  });
  const stopReason = blocks.some((block) => block.type === 'tool_use') ? 'tool_use' : 'end_turn';
  send('message_delta', { delta: { stop_reason: stopReason, stop_sequence: null }, usage });
  send('message_stop', {});
  return events.join('');
}

/**
 * A local stand-in for the Messages API that Claude Code (under the Agent SDK) is pointed at with
 * `ANTHROPIC_BASE_URL`: each request answered as `answering` decides, and kept.
 */
export class MessagesStandIn {
  readonly requests: MessagesRequest[] = [];
  readonly #server: Server;

  private constructor(server: Server) {
    this.#server = server;
  }

  static async start(answering: Answering): Promise<MessagesStandIn> {
    let standIn: MessagesStandIn | undefined;
    const server = createServer(async (request, response) => {
      let body = '';
      for await (const chunk of request) body += chunk;
      if (request.method !== 'POST' || !request.url?.startsWith('/v1/messages')) {
        response.writeHead(404).end();
        return;
      }
      const parsed = JSON.parse(body) as MessagesRequest;
      standIn?.requests.push(parsed);
      let blocks: AnswerBlock[];
      try {
        blocks = await answering(parsed);
      } catch (error) {
        // The API refused the request: an error Claude Code does not try again.
        response.writeHead(400, { 'content-type': 'application/json' });
        response.end(
          JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message: String(error) } }),
        );
        return;
      }
      if (parsed.stream) {
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        response.end(streamed(parsed.model, blocks));
        return;
      }
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify({
          id: 'msg_stand_in',
          type: 'message',
          role: 'assistant',
          model: parsed.model,
          content: blocks,
          stop_reason: blocks.some((block) => block.type === 'tool_use') ? 'tool_use' : 'end_turn',
          stop_sequence: null,
          usage: { input_tokens: 1, output_tokens: 1 },
        }),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    standIn = new MessagesStandIn(server);
    return standIn;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }
}

/** The last message of a request, as text: what the model answers to. */
export const lastMessageText = (request: MessagesRequest): string =>
  JSON.stringify(request.messages.at(-1) ?? '');
