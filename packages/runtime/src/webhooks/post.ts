import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { type DestinationRules, guardedLookup, REFUSED_DESTINATION, refusedLiteral } from './destinations.js';

/** How one attempt went: the HTTP status the receiver answered, or why there was none. */
export type PostOutcome =
  | { status: number }
  | {
      error: string /** The destination itself is refused: trying again will not help. */;
      refused?: boolean;
    };

/** How much of a receiver's answer is read before it is let go: only its status matters. */
const MAX_ANSWER_BYTES = 64 * 1024;

/**
 * POSTs a body to a webhook, once. The destination is checked against the rules before anything is
 * sent, on the address the connection is made to; redirects are not followed (a 3xx is an answer
 * that is not a delivery); past `timeoutMs` the attempt is given up and its socket destroyed.
 *
 * The timeout is a timer of its own, not `AbortSignal.timeout()` combined by `AbortSignal.any()`:
 * Node can collect that combination before it fires (nodejs/node#57736), and a receiver that
 * accepts the connection and never answers then holds the attempt forever.
 */
export function postWebhook(
  url: URL,
  headers: Record<string, string>,
  body: string,
  options: { rules: DestinationRules; timeoutMs: number; signal: AbortSignal },
): Promise<PostOutcome> {
  const literal = refusedLiteral(url, options.rules);
  if (literal) return Promise.resolve({ error: literal, refused: true });
  if (options.signal.aborted) return Promise.resolve({ error: 'stopped before the attempt' });
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve) => {
    let status: number | undefined;
    const request = send(url, {
      method: 'POST',
      headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
      lookup: guardedLookup(options.rules),
    });
    const settle = (outcome: PostOutcome) => {
      clearTimeout(timer);
      options.signal.removeEventListener('abort', stop);
      resolve(outcome);
    };
    // Cut short: whatever is still open (an answer never sent, or trickled) goes with its socket.
    const cut = (outcome: PostOutcome) => {
      settle(outcome);
      request.destroy();
    };
    const timer = setTimeout(
      () => cut(status === undefined ? { error: `no answer within ${options.timeoutMs} ms` } : { status }),
      options.timeoutMs,
    );
    const stop = () => cut({ error: 'stopped during the attempt' });
    options.signal.addEventListener('abort', stop, { once: true });
    request.on('response', (response) => {
      status = response.statusCode ?? 0;
      let read = 0;
      response.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read > MAX_ANSWER_BYTES) response.destroy();
      });
      response.on('error', () => {
        // The answer's body is not needed: its status is in already.
      });
      response.on('close', () => settle({ status: status ?? 0 }));
      response.resume();
    });
    request.on('error', (error: NodeJS.ErrnoException) => {
      settle(
        error.code === REFUSED_DESTINATION
          ? { error: error.message, refused: true }
          : { error: error.message },
      );
    });
    request.end(body);
  });
}
