import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { Server as NetServer } from 'node:net';
import type { Runtime } from '@baton/runtime';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';

/** How long a stopping server lets the requests under way be answered once it stops listening. */
const LAST_ANSWERS_MS = 2_000;
/** How long the answers a stopping server gives at last have to leave before it closes. */
const FLUSH_MS = 1_000;
const RETRY_AFTER_SECONDS = 5;

export const STOPPED_BEFORE_ANSWERING =
  'the server stopped before it could answer (its store did not answer in time): the request may or may not have been carried out; send it again, with the same call id or idempotency key, and another server answers it';

/**
 * SIGINT and SIGTERM stop the process as a deploy would: `stopping` says what is refused meanwhile;
 * the live calls have the drain to end, then are handed over; the HTTP side (if any) closes last.
 */
export function stopOnSignals(
  runtime: Pick<Runtime, 'close'>,
  app: Pick<FastifyInstance, 'close' | 'server'> | undefined,
  log: Pick<Logger, 'info' | 'flush'>,
  { drainMs, stopping }: { drainMs: number; stopping: string },
): void {
  const stopServing = serverStop(runtime, app, { drainMs });
  const stop = async (signal: NodeJS.Signals) => {
    log.info(
      { signal, drainMs },
      `stopping: ${stopping}; live calls may end for the drain, then are handed over`,
    );
    await stopServing();
    log.info('stopped');
    log.flush();
    process.exit(0);
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

/**
 * How a server stops, made when it starts (it counts the requests under way from then on): the
 * runtime drains, and each answer given meanwhile closes its connection; then the server stops
 * listening, lets the requests under way be answered, answers itself those still waiting (503
 * `shutting_down`: a request stuck on a store that does not answer) and ends the event streams,
 * and only then closes. No request is reset.
 */
export function serverStop(
  runtime: Pick<Runtime, 'close'>,
  app: Pick<FastifyInstance, 'close' | 'server'> | undefined,
  { drainMs, lastAnswersMs = LAST_ANSWERS_MS }: { drainMs: number; lastAnswersMs?: number },
): () => Promise<void> {
  const underWay = app ? new RequestsUnderWay(app.server) : undefined;
  return async () => {
    underWay?.closeEachConnection();
    await runtime.close({ drainMs });
    if (!app || !underWay) return;
    await stopListening(app.server, lastAnswersMs);
    await underWay.answerEach(FLUSH_MS);
    await app.close();
  };
}

/**
 * A new connection is refused from now on (a load balancer tries another server, where a reset
 * would be a failed request), and the requests under way, those on connections just accepted
 * included, are answered (for up to `ms`: an event stream never ends by itself).
 */
async function stopListening(server: Server, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    // The listening socket alone: an HTTP server's own close() also closes the connections that
    // carry no request yet, and one just accepted, whose request is on its way, is one of those.
    new Promise((resolve) => NetServer.prototype.close.call(server, resolve)),
    new Promise((resolve) => {
      timer = setTimeout(resolve, ms);
    }),
  ]);
  clearTimeout(timer);
}

/** The requests a server has not finished answering, so that it answers each before it closes. */
class RequestsUnderWay {
  readonly #open = new Map<ServerResponse, IncomingMessage>();
  #closing = false;

  constructor(server: Server) {
    server.on('request', (request: IncomingMessage, response: ServerResponse) => {
      if (this.#closing) response.setHeader('connection', 'close');
      this.#open.set(response, request);
      response.once('close', () => this.#open.delete(response));
    });
  }

  /** From now on each answer closes its connection: none is left idle for the close to cut. */
  closeEachConnection(): void {
    this.#closing = true;
    for (const response of this.#open.keys()) {
      if (!response.headersSent) response.setHeader('connection', 'close');
    }
  }

  /**
   * Answers each request still under way: one not yet answered is refused, in its protocol's
   * words, and an event stream is ended (its client reconnects elsewhere, from its last event).
   * Resolves once the answers are written, or after `ms`.
   */
  async answerEach(ms: number): Promise<void> {
    const written = [...this.#open].map(([response, request]) => {
      const gone = new Promise<void>((resolve) => response.once('close', resolve));
      if (response.headersSent) response.end();
      else refuse(request, response);
      return gone;
    });
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(written),
      new Promise((resolve) => {
        timer = setTimeout(resolve, ms);
      }),
    ]);
    clearTimeout(timer);
  }
}

/** The JSON-RPC doors (MCP, A2A) answer in JSON-RPC; the others in the API's error format. */
function refuse(request: IncomingMessage, response: ServerResponse): void {
  const path = (request.url ?? '').split('?')[0] ?? '';
  const jsonRpc = /\/(mcp|a2a)\/?$/.test(path);
  const body = JSON.stringify(
    jsonRpc
      ? { jsonrpc: '2.0', error: { code: -32000, message: STOPPED_BEFORE_ANSWERING }, id: null }
      : { error: { code: 'shutting_down', message: STOPPED_BEFORE_ANSWERING } },
  );
  response.writeHead(503, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'retry-after': String(RETRY_AFTER_SECONDS),
    connection: 'close',
  });
  response.end(body);
}
