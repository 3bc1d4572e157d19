// A stand-in for a model provider's API, written from its public docs, for the host suite: the
// real host (Claude Code, ...) talks to it as to its model. It plays one scripted agent: call the
// scenario's Baton tool; if the answer is an acknowledgement naming wait_background and a call_id,
// call wait_background with it; once a result is in, say so and end the turn. Every request it
// receives is kept, so the suite reads what the model was shown.
import { createServer } from 'node:http';

/** The model's next move, from the tools it was given and the conversation so far (as text). */
export function nextMove({ tools, lastToolResult, toolResults, tool, args }) {
  const own = tools.find((name) => name === tool || name.endsWith(`__${tool}`));
  if (own === undefined) return { say: 'ok' };
  if (toolResults === 0) return { call: own, args };
  const callId = /call_id[^0-9a-z]+([0-9a-z][0-9a-z-]{15,})/i.exec(lastToolResult)?.[1];
  const wait = tools.find((name) => name === 'wait_background' || name.endsWith('__wait_background'));
  if (
    callId !== undefined &&
    wait !== undefined &&
    /still running|continuing in the background/.test(lastToolResult)
  ) {
    return { call: wait, args: { call_id: callId } };
  }
  return { say: `Done: ${lastToolResult.slice(0, 200)}` };
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

const APIS = {
  anthropic: {
    matches: (method, url) => method === 'POST' && /^\/v1\/messages(\?|$)/.test(url),
    seen: anthropicSeen,
    answer: anthropic,
  },
};

/**
 * Starts the stand-in for `api` on 127.0.0.1: `tool` and `args` are the scenario's call.
 * Returns its port and the requests it received, each as what the model was shown.
 */
export async function scriptedModel({ api, tool, args, port = 0 }) {
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
    served.answer(requests.length, body, move, respond);
  });
  await new Promise((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    port: server.address().port,
    requests,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}
