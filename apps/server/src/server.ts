import { STATUS_CODES } from 'node:http';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  LogController,
} from 'fastify';
import { fail } from './api-errors.js';
import { type BatonPluginOptions, batonPlugin } from './plugin.js';

export interface ServerOptions extends BatonPluginOptions {
  /**
   * Where the server logs: a pino logger (the `baton` command passes one, which the runtime logs
   * through too), or false (the default for a library: quiet). With a logger each request is one
   * line at info, with its method, URL, status and time.
   */
  logger?: FastifyBaseLogger | false;
  /**
   * How long a request may take to arrive, headers and body, before it is answered 408 and its
   * connection closed: a client that trickles a large body a byte at a time holds a connection and
   * its buffer for no longer. Default 30 s.
   */
  requestTimeoutMs?: number;
  /**
   * Fastify's `trustProxy`: whether (or which) proxies' `X-Forwarded-*` headers say the request's
   * scheme and host. Default false: only a server behind a proxy it trusts should believe them.
   */
  trustProxy?: boolean | string | string[];
}

/** How long a request may take to arrive, by default (see `ServerOptions.requestTimeoutMs`). */
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;

/** Node looks for requests past their time this often at most (its default, 30 s, lets them linger). */
const TIMEOUT_CHECK_MS = 1_000;

/** One line per request once it is answered, at info (Fastify's own are two: received, then completed). */
class OneLineRequestLog extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(
    error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ): void {
    const line = {
      method: request.method,
      url: request.url,
      status: reply.statusCode,
      ms: Math.round(reply.elapsedTime * 10) / 10,
    };
    if (error) reply.log.error({ ...line, err: error }, 'request failed');
    else reply.log.info(line, 'request');
  }
}

/** Any id the API takes (128 characters, each up to 9 when percent-encoded) fits in a path parameter. */
const MAX_PARAM_LENGTH = 2048;

/**
 * The Baton server: a Fastify app with `batonPlugin` mounted at its root, and the server-wide
 * settings the plugin cannot make for an app it is mounted in: the body limit (1 MiB), the time a
 * request may take to arrive (30 s), router limits, the answers to what Node's HTTP parser and Fastify's router refuse, and request logs.
 * `listen()` it, or `inject()` requests in tests.
 */
export function createServer({
  logger = false,
  requestTimeoutMs = DEFAULT_REQUEST_TIMEOUT_MS,
  trustProxy = false,
  ...options
}: ServerOptions): FastifyInstance {
  const app = Fastify({
    trustProxy,
    bodyLimit: 1024 * 1024,
    requestTimeout: requestTimeoutMs,
    http: {
      // Headers come within the request's time, or Node refuses the setting.
      headersTimeout: Math.min(requestTimeoutMs, 60_000),
      connectionsCheckingInterval: Math.min(TIMEOUT_CHECK_MS, requestTimeoutMs),
    },
    forceCloseConnections: true,
    // A long id is answered by its schema (400), not by the router (414).
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    ...(logger ? { loggerInstance: logger, logController: new OneLineRequestLog() } : {}),
    // What Node's HTTP parser refuses (not HTTP, headers too large) answers in the API's format too.
    clientErrorHandler: (error, socket) => {
      const code = (error as NodeJS.ErrnoException).code;
      // Bytes after a request that asked to close: that request still gets its answer, then the
      // connection closes as it asked; the bytes after it are dropped.
      if (code === 'HPE_CLOSED_CONNECTION') return;
      if (socket.destroyed || !socket.writable) return;
      const [status, errorCode, message] =
        code === 'HPE_HEADER_OVERFLOW'
          ? [431, 'headers_too_large', 'the request headers are larger than the server takes']
          : code === 'ERR_HTTP_REQUEST_TIMEOUT'
            ? [408, 'request_timeout', 'the request did not arrive in time']
            : [400, 'invalid_request', `the request is not valid HTTP (${code ?? 'parse error'})`];
      const body = JSON.stringify({ error: { code: errorCode, message } });
      socket.end(
        `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
          `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
    },
    // What the router refuses before any route runs answers in the API's one error format too.
    frameworkErrors: (error, _request, reply) => {
      if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') {
        return fail(reply, 414, 'uri_too_long', 'a part of the path is longer than any id can be');
      }
      if (error.code === 'FST_ERR_BAD_URL') {
        return fail(reply, 400, 'invalid_request', 'the URL is not valid: it has a malformed %-escape');
      }
      app.log.error(error);
      return fail(reply, 500, 'internal_error', 'the server failed to answer');
    },
  });
  void app.register(batonPlugin, options);
  return app;
}
