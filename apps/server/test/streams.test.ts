import { connect, type Socket } from 'node:net';
import { createRuntime, type Runtime } from '@baton/runtime';
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { demoTools } from '../src/demo-tools.js';
import { createServer, type ServerOptions } from '../src/server.js';

let runtime: Runtime;
let app: FastifyInstance;
let base: URL;

async function listen(options: Omit<ServerOptions, 'runtime'> = {}) {
  runtime = createRuntime({ tools: demoTools });
  await runtime.ready;
  app = createServer({ runtime, ...options });
  base = new URL(await app.listen({ host: '127.0.0.1', port: 0 }));
}

afterEach(async () => {
  await app.close();
  await runtime.close();
});

/**
 * A raw HTTP/1.1 GET that reads the head of its stream, then nothing until `resume()`: a reader
 * that stopped reading.
 */
async function pausedReader(
  path: string,
): Promise<{ socket: Socket; received: () => string; ended: Promise<void> }> {
  const socket = connect(Number(base.port), base.hostname);
  socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${base.port}\r\nAccept: text/event-stream\r\n\r\n`);
  let text = '';
  const opened = new Promise<void>((resolve) =>
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      if (text.includes(': stream open')) resolve();
    }),
  );
  const ended = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  await opened;
  socket.pause();
  return { socket, received: () => text, ended };
}

/** Tries `attempt` on each of up to 200 turns of the event loop until it holds (no timer). */
async function eventually(attempt: () => Promise<boolean>): Promise<void> {
  for (let turn = 0; turn < 200; turn++) {
    if (await attempt()) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error('never held');
}

describe('event streams', () => {
  it('are limited per tenant and in all; a closed one frees its place', async () => {
    await listen({ limits: { streamsPerTenant: 2, streams: 2 } });
    const open = [new AbortController(), new AbortController()];
    for (const controller of open) {
      const response = await fetch(new URL('/v1/events', base), { signal: controller.signal });
      expect(response.status).toBe(200);
    }
    const refused = await fetch(new URL('/v1/sessions/s/events', base));
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('too_many_streams');
    open[0]?.abort();
    // The server hears of the close a moment later; then there is a place again.
    await eventually(async () => {
      const stream = await fetch(new URL('/v1/events', base));
      await stream.body?.cancel();
      return stream.status === 200;
    });
    open[1]?.abort();
  });

  it('let go of a live reader that stops reading once it holds more than the bound unsent, and stay up', async () => {
    await listen();
    const reader = await pausedReader('/v1/events');
    // Far more than the bound and the kernel's socket buffers together: 400 results of 100 KB.
    const text = 'x'.repeat(100_000);
    for (let i = 0; i < 400; i++) await runtime.call({ name: 'echo', args: { text }, sessionId: 's' });
    reader.socket.resume();
    await reader.ended;
    const delivered = reader
      .received()
      .split('\n\n')
      .filter((message) => message.includes('"succeeded"')).length;
    expect(delivered).toBeGreaterThan(0);
    expect(delivered).toBeLessThan(400);
    expect((await fetch(new URL('/healthz', base))).status).toBe(200);
  });
});
