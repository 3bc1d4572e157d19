import type { AddressInfo } from 'node:net';
import { createServer, type Socket } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterEach, describe, expect, it } from 'vitest';
import type { DestinationRules } from '../src/webhooks/destinations.js';
import { postWebhook } from '../src/webhooks/post.js';

// The collector, run on demand: what it may take while an attempt waits is what this file tests.
setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

const closing: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closing.splice(0)) await close();
});

/** A receiver that accepts each connection and never answers; it counts the connections it holds. */
async function silentReceiver() {
  const open = new Set<Socket>();
  const server = createServer((socket) => {
    open.add(socket);
    socket.resume();
    socket.on('close', () => open.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closing.push(async () => {
    for (const socket of open) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  });
  return { url: new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`), open };
}

const rules: DestinationRules = { loopback: true, private: false };

describe('one webhook attempt', () => {
  it('gives up on a receiver that accepts the connection and never answers, at its timeout, though the collector runs meanwhile, and closes the connection', async () => {
    const receiver = await silentReceiver();
    const started = Date.now();
    const attempt = postWebhook(receiver.url, {}, '{}', {
      rules,
      timeoutMs: 200,
      signal: new AbortController().signal,
    });
    const collecting = setInterval(collectGarbage, 10);
    try {
      expect(await attempt).toEqual({ error: 'no answer within 200 ms' });
    } finally {
      clearInterval(collecting);
    }
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
    await expect.poll(() => receiver.open.size).toBe(0);
  }, 10_000);

  it('stops at once when the process stops, and closes the connection', async () => {
    const receiver = await silentReceiver();
    const stop = new AbortController();
    const attempt = postWebhook(receiver.url, {}, '{}', { rules, timeoutMs: 60_000, signal: stop.signal });
    await expect.poll(() => receiver.open.size).toBe(1);
    stop.abort();
    expect(await attempt).toEqual({ error: 'stopped during the attempt' });
    await expect.poll(() => receiver.open.size).toBe(0);
  }, 10_000);
});
