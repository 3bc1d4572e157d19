// A stand-in for a model provider's API, written from its public docs, for the host suite: the
// real host (Claude Code, ...) talks to it as to its model. It plays one scripted agent: call the
// scenario's Baton tool; if the answer is an acknowledgement naming wait_background and a call_id,
// call wait_background with it; once a result is in, say so and end the turn. Every request it
// receives is kept, so the suite reads what the model was shown.
import { createServer } from 'node:http';

/** The model's next move, from the tools it was given and the conversation so far (as text). */
export function nextMove({ tools, lastToolResult, toolResults, tool, args }) {
  const own = tools.find((name) => isBaton(name, tool));
  if (own === undefined) return { say: 'ok' };
  if (toolResults === 0) return { call: own, args };
  const callId = /call_id[^0-9a-z]+([0-9a-z][0-9a-z-]{15,})/i.exec(lastToolResult)?.[1];
  const wait = tools.find((name) => isBaton(name, 'wait_background'));
  if (
    callId !== undefined &&
    wait !== undefined &&
    /still running|continuing in the background/.test(lastToolResult)
  ) {
    return { call: wait, args: { call_id: callId } };
  }
  return { say: `Done: ${lastToolResult.slice(0, 200)}` };
}

/** A host's name for Baton's tool: as it is, or under the server's name (`mcp__baton__x`, `mcp_baton_x`). */
function isBaton(name, tool) {
  return name === tool || name === `mcp__baton__${tool}` || name === `mcp_baton_${tool}`;
}

/** The Anthropic Messages API (`POST /v1/messages`, streamed as server-sent events). */
function anthropic(request, body, move, respond) {
  const events = [];
  const event = (type, data) => events.push(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  event('message_start', {
    message: {
      id: `msg_${request}`,
      type: 'message',
      role: 'assistant',
      model: body.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 1, output_tokens: 1 },
    },
  });
  if ('call' in move) {
    event('content_block_start', {
      index: 0,
      content_block: { type: 'tool_use', id: `toolu_${request}`, name: move.call, input: {} },
    });
    event('content_block_delta', {
      index: 0,
      delta: { type: 'input_json_delta', partial_json: JSON.stringify(move.args) },
    });
  } else {
    event('content_block_start', { index: 0, content_block: { type: 'text', text: '' } });
    event('content_block_delta', { index: 0, delta: { type: 'text_delta', text: move.say } });
  }
  event('content_block_stop', { index: 0 });
  event('message_delta', {
    delta: { stop_reason: 'call' in move ? 'tool_use' : 'end_turn', stop_sequence: null },
    usage: { output_tokens: 1 },
  });
  event('message_stop', {});
  respond(200, 'text/event-stream', events.join(''));
}

/** What an Anthropic request shows the model: its tools' names and its tool results, as text. */
function anthropicSeen(body) {
  const results = (body.messages ?? [])
    .flatMap((message) => (Array.isArray(message.content) ? message.content : []))
    .filter((block) => block.type === 'tool_result')
    .map((block) => (typeof block.content === 'string' ? block.content : JSON.stringify(block.content)));
  return { tools: (body.tools ?? []).map((tool) => tool.name), results };
}

/**
 * The Gemini API: `models/{model}:streamGenerateContent?alt=sse` for the conversation (server-sent
 * events), `:generateContent` for a host's side questions, `:countTokens`.
 */
function gemini(_request, body, move, respond, url) {
  if (url.includes(':countTokens')) {
    respond(200, 'application/json', JSON.stringify({ totalTokens: 1 }));
    return;
  }
  // A side question asked for JSON (a host's router, its next-speaker check) is answered with none.
  const json = body.generationConfig?.responseMimeType === 'application/json';
  const part =
    'call' in move
      ? { functionCall: { name: move.call, args: move.args } }
      : { text: json ? '{}' : move.say };
  const answer = {
    candidates: [{ content: { role: 'model', parts: [part] }, finishReason: 'STOP', index: 0 }],
    usageMetadata: { promptTokenCount: 1, candidatesTokenCount: 1, totalTokenCount: 2 },
    modelVersion: 'scripted',
  };
  if (url.includes(':streamGenerateContent')) {
    respond(200, 'text/event-stream', `data: ${JSON.stringify(answer)}\r\n\r\n`);
  } else respond(200, 'application/json', JSON.stringify(answer));
}

/** What a Gemini request shows the model: its function declarations and the function responses. */
function geminiSeen(body) {
  const tools = (body.tools ?? []).flatMap((tool) => (tool.functionDeclarations ?? []).map((fn) => fn.name));
  const results = (body.contents ?? [])
    .flatMap((content) => content.parts ?? [])
    .filter((part) => part.functionResponse)
    .map((part) => JSON.stringify(part.functionResponse.response));
  return { tools, results };
}

/** The OpenAI Responses API (`POST /v1/responses`, streamed as server-sent events). */
function responses(request, _body, move, respond) {
  const events = [];
  const event = (type, data) => events.push(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  const id = `resp_${request}`;
  event('response.created', { response: { id, status: 'in_progress', output: [] } });
  const item =
    'call' in move
      ? {
          type: 'function_call',
          id: `fc_${request}`,
          call_id: `call_${request}`,
          ...namespaced(move.call),
          arguments: JSON.stringify(move.args),
          status: 'completed',
        }
      : {
          type: 'message',
          id: `msg_${request}`,
          role: 'assistant',
          status: 'completed',
          content: [{ type: 'output_text', text: move.say, annotations: [] }],
        };
  event('response.output_item.added', { output_index: 0, item });
  event('response.output_item.done', { output_index: 0, item });
  event('response.completed', {
    response: {
      id,
      status: 'completed',
      output: [item],
      usage: {
        input_tokens: 1,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: 1,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: 2,
      },
    },
  });
  respond(200, 'text/event-stream', events.join(''));
}

/** A function's name, and its namespace when it has one (`mcp__baton__x`: `x` in `mcp__baton`). */
function namespaced(name) {
  const at = name.lastIndexOf('__');
  return name.startsWith('mcp__') && at > 4
    ? { namespace: name.slice(0, at), name: name.slice(at + 2) }
    : { name };
}

/** What a Responses request shows the model: its functions and the outputs of its calls. */
function responsesSeen(body) {
  // A namespace of functions (Codex lists an MCP server's tools as one) names each under it.
  const tools = (body.tools ?? []).flatMap((tool) =>
    tool.type === 'namespace'
      ? (tool.tools ?? []).map((inner) => `${tool.name}__${inner.name}`)
      : [tool.name],
  );
  const results = (Array.isArray(body.input) ? body.input : [])
    .filter((item) => item.type === 'function_call_output')
    .map((item) => (typeof item.output === 'string' ? item.output : JSON.stringify(item.output)));
  return { tools, results };
}

const APIS = {
  responses: {
    matches: (method, url) => method === 'POST' && /\/responses(\?|$)/.test(url),
    seen: responsesSeen,
    answer: responses,
  },
  gemini: {
    matches: (method, url) =>
      method === 'POST' && /\/models\/[^/:]+:(streamGenerateContent|generateContent|countTokens)/.test(url),
    seen: geminiSeen,
    answer: gemini,
  },
  anthropic: {
    matches: (method, url) => method === 'POST' && /^\/v1\/messages(\?|$)/.test(url),
    seen: anthropicSeen,
    answer: anthropic,
  },
};

/**
 * Starts the stand-in for `api` on 127.0.0.1: `tool` and `args` are the scenario's call;
 * `beforeWait` runs once before the model's move that calls wait_background.
 * Returns its port and the requests it received, each as what the model was shown.
 */
export async function scriptedModel({ api, tool, args, port = 0, beforeWait }) {
  const served = APIS[api];
  if (served === undefined) throw new Error(`no stand-in for the ${api} API`);
  const requests = [];
  const server = createServer(async (req, res) => {
    let text = '';
    for await (const chunk of req) text += chunk;
    const respond = (status, type, payload) => {
      res.writeHead(status, { 'content-type': type });
      res.end(payload);
    };
    if (!served.matches(req.method, req.url ?? '')) {
      requests.push({ url: req.url, unanswered: true });
      respond(404, 'application/json', JSON.stringify({ error: { message: `not served: ${req.url}` } }));
      return;
    }
    const body = JSON.parse(text);
    const { tools, results } = served.seen(body);
    const move = nextMove({
      tools,
      lastToolResult: results.at(-1) ?? '',
      toolResults: results.length,
      tool,
      args,
    });
    requests.push({ url: req.url, tools, results, move });
    // Once, before the model calls wait_background: what the scenario does meanwhile.
    if ('call' in move && move.call.endsWith('wait_background') && beforeWait) {
      const waiting = beforeWait;
      beforeWait = undefined;
      await waiting();
    }
    served.answer(requests.length, body, move, respond, req.url ?? '');
  });
  await new Promise((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    port: server.address().port,
    requests,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}
