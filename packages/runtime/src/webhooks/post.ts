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
 * that is not a delivery); past `timeoutMs` the attempt is given up.
 */
export function postWebhook(
  url: URL,
  headers: Record<string, string>,
  body: string,
  options: { rules: DestinationRules; timeoutMs: number; signal: AbortSignal },
): Promise<PostOutcome> {
  const literal = refusedLiteral(url, options.rules);
  if (literal) return Promise.resolve({ error: literal, refused: true });
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve) => {
    const request = send(url, {
      method: 'POST',
      headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
      lookup: guardedLookup(options.rules),
      signal: AbortSignal.any([options.signal, AbortSignal.timeout(options.timeoutMs)]),
    });
    request.on('response', (response) => {
      let read = 0;
      response.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read > MAX_ANSWER_BYTES) response.destroy();
      });
      response.on('error', () => {
        // The answer's body is not needed: its status is in already.
      });
      response.on('close', () => resolve({ status: response.statusCode ?? 0 }));
      response.resume();
    });
    request.on('error', (error: NodeJS.ErrnoException) => {
      const timedOut = error.name === 'AbortError' && !options.signal.aborted;
      resolve(
        error.code === REFUSED_DESTINATION
          ? { error: error.message, refused: true }
          : { error: timedOut ? `no answer within ${options.timeoutMs} ms` : error.message },
      );
    });
    request.end(body);
  });
}
