import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Observable } from 'rxjs';

/** A comment line this often keeps proxies from closing a quiet stream. */
const KEEP_ALIVE_MS = 15_000;

export interface SseMessage {
  /** What the client sends back as `Last-Event-ID` to resume after this message; none for a live-only stream. */
  id?: number;
  data: unknown;
}

/**
 * Answers a request with a Server-Sent Events stream of `messages` until the client goes away.
 * Each message's data is one line of JSON, so a message is exactly one `data:` line.
 */
export function streamEvents(
  request: FastifyRequest,
  reply: FastifyReply,
  messages: Observable<SseMessage>,
): void {
  reply.hijack();
  const response = reply.raw;
  response.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  });
  response.write(': stream open\n\n');
  const keepAlive = setInterval(() => response.write(': keep-alive\n\n'), KEEP_ALIVE_MS);
  keepAlive.unref();
  const subscription = messages.subscribe({
    next: ({ id, data }) =>
      response.write(`${id === undefined ? '' : `id: ${id}\n`}data: ${JSON.stringify(data)}\n\n`),
    error: (error: unknown) => {
      response.write(`event: error\ndata: ${JSON.stringify({ message: String(error) })}\n\n`);
      response.end();
    },
  });
  request.raw.on('close', () => {
    clearInterval(keepAlive);
    subscription.unsubscribe();
  });
}

/** Where a stream resumes: `Last-Event-ID` (sent by EventSource on reconnect), else `?after=`, else 0. */
export function resumeAfter(request: FastifyRequest, after: number | undefined): number | undefined {
  const header = request.headers['last-event-id'];
  if (header === undefined) return after ?? 0;
  const value = Number(header);
  return Number.isSafeInteger(value) && value >= 0 ? value : undefined;
}
