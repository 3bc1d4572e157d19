import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import type { McpHandler } from './handler.js';
import { jsonRpcErrorResponse } from './responses.js';

/** A Node request handler: `node:http`, Express (its `next` is ignored), or Fastify's raw objects. */
export type NodeMcpHandler = (
  request: IncomingMessage,
  response: ServerResponse,
  parsedBody?: unknown,
) => Promise<void>;

/**
 * The request as a web `Request`. Its body streams, unless the handler reads it from the Node
 * request itself (no web stream to make). The Host header names the URL, as the client sent it
 * (the handler checks it); it aborts when the client goes away.
 */
function webRequestOf(request: IncomingMessage, signal: AbortSignal, withBody: boolean): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (Array.isArray(value)) for (const each of value) headers.append(name, each);
    else if (value !== undefined) headers.set(name, value);
  }
  let url: URL;
  try {
    url = new URL(request.url ?? '/', `http://${request.headers.host ?? 'localhost'}`);
  } catch {
    url = new URL(request.url ?? '/', 'http://invalid-host');
  }
  const method = request.method ?? 'GET';
  const body =
    !withBody || method === 'GET' || method === 'HEAD'
      ? {}
      : { body: Readable.toWeb(request) as ReadableStream, duplex: 'half' as const };
  return new Request(url, { method, headers, signal, ...body });
}

/** Writes a web `Response` to Node, streaming its body (SSE) with backpressure until either side ends. */
async function send(response: Response, to: ServerResponse, stream = false): Promise<void> {
  const headers: Record<string, string | string[]> = {};
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 0) headers['set-cookie'] = cookies;
  to.writeHead(response.status, headers);
  if (!response.body) {
    to.end();
    return;
  }
  // A GET stream (2025-11-25's standalone SSE) may send nothing for a long time: its headers go
  // now, so that the client knows it is open. A POST's answer comes at once, headers with it.
  if (stream) to.flushHeaders();
  const reader = response.body.getReader();
  const closed = new Promise<void>((resolve) => to.once('close', resolve));
  closed
    .then(() => reader.cancel())
    .catch(() => {
      // The stream had ended already: nothing to cancel.
    });
  for (;;) {
    const { done, value } = await reader.read();
    if (done || to.destroyed) break;
    if (!to.write(value)) await Promise.race([new Promise((resolve) => to.once('drain', resolve)), closed]);
  }
  to.end();
}

/**
 * The handler as a Node `(req, res, parsedBody?)` function, for `node:http`, Express and Fastify.
 * Behind a body parser, pass the parsed body; otherwise the handler reads the request itself.
 */
export function toNodeHandler(
  handler: Pick<McpHandler, 'fetch'> & Partial<Pick<McpHandler, 'readsGivenBody'>>,
  options: { onError?: (error: Error) => void } = {},
): NodeMcpHandler {
  return async (request, response, parsedBody) => {
    const aborted = new AbortController();
    response.once('close', () => {
      if (!response.writableFinished) aborted.abort();
    });
    try {
      const unparsed = parsedBody === undefined || typeof parsedBody === 'function';
      const readsBody = unparsed && handler.readsGivenBody === true;
      const given = unparsed ? (readsBody ? { body: request } : {}) : { parsedBody };
      await send(
        await handler.fetch(webRequestOf(request, aborted.signal, unparsed && !readsBody), given),
        response,
        request.method === 'GET',
      );
    } catch (error) {
      options.onError?.(error instanceof Error ? error : new Error(String(error)));
      if (!response.headersSent) await send(jsonRpcErrorResponse(500, -32603, 'Internal error'), response);
      else response.destroy();
    }
  };
}
