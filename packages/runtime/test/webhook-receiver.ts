import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach } from 'vitest';

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

/** A webhook receiver on loopback: it answers each request with the next status of `answers` (200 once they run out). */
export async function receiver(answers: number[] = [], port = 0) {
  const received: Received[] = [];
  const waiting: Array<(request: Received) => void> = [];
  const server: Server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => {
      body += chunk;
    });
    request.on('end', () => {
      const entry = { headers: request.headers, body };
      received.push(entry);
      response.writeHead(answers.shift() ?? 200).end();
      waiting.shift()?.(entry);
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  receivers.push(server);
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/baton`;
  /** The next request, or one already received that nobody took yet. */
  let taken = 0;
  const next = () =>
    taken < received.length
      ? Promise.resolve(received[taken++] as Received)
      : new Promise<Received>((resolve) => {
          taken++;
          waiting.push(resolve);
        });
  return { received, url, next, close: () => new Promise((resolve) => server.close(resolve)) };
}

/** Every receiver a test opened: closed after it. */
export const receivers: Server[] = [];
afterEach(async () => {
  for (const server of receivers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});
