import type { ServerResponse } from 'node:http';
import { type CallEvent, type CallRecord, type CallStatus, isTerminalStatus } from '@baton/contracts';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Observable, Subscription } from 'rxjs';

/** A comment line this often keeps proxies from closing a quiet stream. */
const KEEP_ALIVE_MS = 15_000;

/**
 * What a stream may hold unsent before its reader counts as too slow and the stream is closed (it
 * resumes from `Last-Event-ID`). Followed streams wait for the reader before they read more, so
 * only a live-only stream, or one page of very large events, comes near it.
 */
export const MAX_UNSENT_BYTES = 4 * 1024 * 1024;

export interface SseMessage {
  /** What the client sends back as `Last-Event-ID` to resume after this message; none for a live-only stream. */
  id?: number;
  /** The message's `event:` name (a call event's type); EventSource then dispatches it by that name. */
  event?: string;
  data: unknown;
}

/** Resolves once the response can take more (`drain`), or is gone: a follower's `ready`. */
function whenWritable(response: ServerResponse): Promise<void> | undefined {
  if (!response.writableNeedDrain || response.destroyed) return undefined;
  return new Promise((resolve) => {
    const done = () => {
      response.off('drain', done);
      response.off('close', done);
      resolve();
    };
    response.on('drain', done);
    response.on('close', done);
  });
}

/**
 * Answers a request with a Server-Sent Events stream until the client goes away. Each message's
 * data is one line of JSON, so a message is exactly one `data:` line. `messages` gets a `ready`
 * to pass to a follower, so that the store is read only as fast as the client takes what it sent.
 * `onClose` runs once when the stream ends, however it ends.
 */
export function streamEvents(
  request: FastifyRequest,
  reply: FastifyReply,
  messages: (ready: () => Promise<void> | undefined) => Observable<SseMessage>,
  onClose: () => void = () => {},
): void {
  reply.hijack();
  const response = reply.raw;
  response.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  });
  let closed = false;
  let subscription: Subscription | undefined;
  let keepAlive: NodeJS.Timeout | undefined;
  /** Ends the stream; `drop` lets go of what is unsent at once (the connection closes with it). */
  const close = (drop = false) => {
    if (closed) return;
    closed = true;
    clearInterval(keepAlive);
    subscription?.unsubscribe();
    onClose();
    if (drop) response.destroy();
    else if (!response.writableEnded) response.end();
  };
  const write = (text: string) => {
    if (closed) return;
    response.write(text);
    // Too slow a reader: it is let go, and comes back from where it was (Last-Event-ID).
    if (response.writableLength > MAX_UNSENT_BYTES) close(true);
  };
  write(': stream open\n\n');
  keepAlive = setInterval(() => write(': keep-alive\n\n'), KEEP_ALIVE_MS);
  keepAlive.unref();
  request.raw.on('close', () => close());
  subscription = messages(() => whenWritable(response)).subscribe({
    next: ({ id, event, data }) =>
      write(
        `${id === undefined ? '' : `id: ${id}\n`}${event === undefined ? '' : `event: ${event}\n`}data: ${JSON.stringify(data)}\n\n`,
      ),
    error: (error: unknown) => {
      write(`event: error\ndata: ${JSON.stringify({ message: String(error) })}\n\n`);
      close();
    },
    // A stream with an end (a call's, after its terminal event) closes the response there.
    complete: () => close(),
  });
  if (closed) subscription.unsubscribe();
}

/** Where a stream resumes: `Last-Event-ID` (sent by EventSource on reconnect), else `?after=`, else 0. */
export function resumeAfter(request: FastifyRequest, after: number | undefined): number | undefined {
  const header = request.headers['last-event-id'];
  if (header === undefined) return after ?? 0;
  const value = Number(header);
  return Number.isSafeInteger(value) && value >= 0 ? value : undefined;
}

/**
 * Open streams, per tenant and in all: each holds a connection and a follower, so past the limits
 * a new one is refused (429) rather than let one tenant hold every socket.
 */
export class StreamLimits {
  readonly #perTenant = new Map<string, number>();
  #total = 0;

  constructor(
    readonly maxPerTenant: number,
    readonly maxTotal: number,
  ) {}

  /** Takes a place for a stream of `tenant`: the release to call when it ends, or undefined when full. */
  take(tenant: string): (() => void) | undefined {
    const mine = this.#perTenant.get(tenant) ?? 0;
    if (mine >= this.maxPerTenant || this.#total >= this.maxTotal) return undefined;
    this.#perTenant.set(tenant, mine + 1);
    this.#total++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#total--;
      const left = (this.#perTenant.get(tenant) ?? 1) - 1;
      if (left === 0) this.#perTenant.delete(tenant);
      else this.#perTenant.set(tenant, left);
    };
  }

  get open(): number {
    return this.#total;
  }
}

/**
 * Until a call's stream has sent its last event: the terminal one, or, when the call's end goes to
 * its session (it was answered `backgrounded`, and signals its end), the notification's after it.
 */
export function untilLastEvent(record: CallRecord): (event: CallEvent) => boolean {
  let detached = record.detached;
  const signals = !(record.run && !record.run.signalOnCompletion);
  return (event) => {
    if (event.type === 'backgrounded') detached = true;
    if (event.type === 'notification') return false;
    return !isTerminalStatus(event.type as CallStatus) || (detached && signals);
  };
}
