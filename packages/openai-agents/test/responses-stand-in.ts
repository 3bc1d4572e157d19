import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** An item of a request's input or a response's output, as far as the stand-in reads it. */
export interface Item {
  type?: string;
  role?: string;
  call_id?: string;
  name?: string;
  arguments?: string;
  async?: boolean;
  output?: string;
  content?: unknown;
}

export interface ResponsesRequest {
  model: string;
  input: Item[];
  tools?: Array<{ type: string; name: string; async?: boolean }>;
}

/** What the model answers a request with: output items (a function call's `async` is set by the stand-in). */
export type Answering = (request: ResponsesRequest) => Item[];

/**
 * A local stand-in for the Responses API (`POST /v1/responses`), written from OpenAI's guides to
 * function calling and async tool calling: a function call must have its output in the request
 * after it, unless its tool is declared `async: true` (then its call item says `async: true`, and
 * the output may come in any later request); an output needs a call of its `call_id` before it,
 * and a call takes one output. A request that breaks one of these is refused with 400, as the API
 * refuses it. `honoursAsync: false` plays a model that does not do async tool calling.
 */
export class ResponsesStandIn {
  readonly requests: ResponsesRequest[] = [];
  readonly #server: Server;
  private constructor(server: Server) {
    this.#server = server;
  }

  static async start(answering: Answering, { honoursAsync = true } = {}): Promise<ResponsesStandIn> {
    let standIn: ResponsesStandIn | undefined;
    const server = createServer(async (request, response) => {
      let body = '';
      for await (const chunk of request) body += chunk;
      const parsed = JSON.parse(body) as ResponsesRequest;
      const refusal = refusalOf(parsed.input);
      if (refusal !== undefined) {
        response.writeHead(400, { 'content-type': 'application/json' });
        response.end(
          JSON.stringify({
            error: { message: refusal, type: 'invalid_request_error', param: 'input', code: null },
          }),
        );
        return;
      }
      standIn?.requests.push(parsed);
      const declaredAsync = new Set(
        (parsed.tools ?? []).filter((tool) => tool.async === true).map((tool) => tool.name),
      );
      const output = answering(parsed).map((item, index) =>
        item.type === 'function_call'
          ? {
              id: `fc_${index}`,
              status: 'completed',
              ...item,
              ...(honoursAsync && declaredAsync.has(item.name ?? '') ? { async: true } : {}),
            }
          : { id: `msg_${index}`, status: 'completed', ...item },
      );
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify({
          id: `resp_${standIn?.requests.length}`,
          object: 'response',
          created_at: 0,
          status: 'completed',
          model: parsed.model,
          output,
          usage: { input_tokens: 1, output_tokens: 1, total_tokens: 2 },
        }),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    standIn = new ResponsesStandIn(server);
    return standIn;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}/v1`;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }
}

/** Why the API would refuse this input, or undefined. */
function refusalOf(input: readonly Item[]): string | undefined {
  const calls = new Map<string, Item>();
  const answered = new Set<string>();
  for (const item of input) {
    if (item.type === 'function_call' && item.call_id) calls.set(item.call_id, item);
    if (item.type !== 'function_call_output' || !item.call_id) continue;
    if (!calls.has(item.call_id))
      return `No tool call found for function call output with call_id ${item.call_id}.`;
    if (answered.has(item.call_id)) return `Duplicate function call output for call_id ${item.call_id}.`;
    answered.add(item.call_id);
  }
  for (const [callId, call] of calls) {
    if (call.async !== true && !answered.has(callId))
      return `No tool output found for function call ${callId}.`;
  }
  return undefined;
}
