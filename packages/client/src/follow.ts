import { type CallEvent, type CallRecord, endOf } from '@baton/contracts';
import { EventSourceParserStream } from 'eventsource-parser/stream';
import { BatonClientError } from './errors.js';
import { type Connection, refusalOf, send } from './http.js';

export interface FollowOptions {
  /** Start after this event (`seq`); 0, the default, from the call's first event. */
  after?: number;
  /** Stops following: the iteration ends with the signal's reason. */
  signal?: AbortSignal;
  /** How long to wait before connecting again after a drop (default 1,000 ms). */
  reconnectDelayMs?: number;
  /** Connections in a row that bring no event before following gives up (default 10). */
  maxReconnects?: number;
}

/** Statuses the server answers while it starts, drains or rides out its store: worth a retry. */
const PASSING = new Set([502, 503, 504]);

/**
 * A call's events in order, from the server's stream (`GET /v1/calls/:id/events`), connecting again
 * after a drop from the last event it got (`Last-Event-ID`, so nothing is missed or repeated). It
 * ends after the call's terminal event, or after its notification for a call that was
 * backgrounded (its result as the model is told it).
 */
export async function* followCall(
  connection: Connection,
  callId: string,
  options: FollowOptions,
  record: () => Promise<CallRecord | undefined>,
): AsyncGenerator<CallEvent, void, undefined> {
  const { signal, reconnectDelayMs = 1_000, maxReconnects = 10 } = options;
  let after = options.after ?? 0;
  // From the first event, the stream itself says whether the call was backgrounded.
  let detached = after > 0 ? ((await record())?.detached ?? false) : false;
  let fruitless = 0;
  const path = `/v1/calls/${encodeURIComponent(callId)}/events`;
  for (;;) {
    let dropped: unknown;
    try {
      const response = await send(connection, 'GET', path, {
        headers: { accept: 'text/event-stream', 'last-event-id': String(after) },
        signal,
      });
      // 204: the call ended and nothing comes after `after`.
      if (response.status === 204) return;
      if (!response.ok) {
        const refusal = await refusalOf(response);
        if (!PASSING.has(response.status)) throw refusal;
        dropped = refusal;
      } else if (response.body) {
        const messages = response.body
          .pipeThrough(new TextDecoderStream())
          .pipeThrough(new EventSourceParserStream());
        for await (const message of messages) {
          const event = JSON.parse(message.data) as CallEvent;
          after = event.seq;
          fruitless = 0;
          if (event.type === 'backgrounded') detached = true;
          yield event;
          if (event.type === 'notification' || (endOf(event) !== undefined && !detached)) return;
        }
      }
    } catch (error) {
      if (signal?.aborted || (error instanceof BatonClientError && error.code !== 'network_error'))
        throw error;
      dropped = error;
    }
    // The stream ended before the call's last event (a restart, a proxy): connect again from `after`.
    fruitless += 1;
    if (fruitless > maxReconnects) {
      throw new BatonClientError(
        'network_error',
        `following ${callId}: ${maxReconnects} connections in a row brought no event`,
        dropped === undefined ? {} : { cause: dropped },
      );
    }
    await delay(reconnectDelayMs, signal);
  }
}

function delay(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', abort);
      resolve();
    }, ms);
    const abort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', abort, { once: true });
  });
}
