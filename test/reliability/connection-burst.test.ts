/**
 * A burst of connections while the server is busy: 2,000 clients connect during a 1.5 s stall of
 * its event loop, each sending its request's headers a line at a time, as a slow client does. Every
 * one is answered once the server is free again; none is reset by the kernel (which happens when
 * the listen queue overflows and the kernel falls back to SYN cookies). Real process, real sockets.
 */
import { connect } from 'node:net';
import { join } from 'node:path';
import { type ServerProcess, startServer } from '@baton/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const CLIENTS = 2_000;
const LINE_EVERY_MS = 200;
const HEADER_LINES = [
  'Host: 127.0.0.1\r\n',
  'Accept: */*\r\n',
  'User-Agent: burst\r\n',
  'Connection: close\r\n',
  '\r\n',
];

let server: ServerProcess;
beforeAll(async () => {
  server = await startServer({
    nodeFlags: ['--import', join(import.meta.dirname, 'stall-on-signal.mjs')],
    env: { STALL_MS: '1500' },
  });
}, 60_000);
afterAll(() => server?.stop());

/** A GET /healthz whose request line goes first, and each header line a moment after the last. */
function healthzLineByLine(port: number): Promise<{ answer: string; error?: string }> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let answer = '';
    let error: string | undefined;
    socket.on('connect', () => {
      socket.write('GET /healthz HTTP/1.1\r\n');
      const lines = [...HEADER_LINES];
      const writing = setInterval(() => {
        const line = lines.shift();
        if (line === undefined || !socket.writable) clearInterval(writing);
        else socket.write(line);
      }, LINE_EVERY_MS);
    });
    socket.on('data', (chunk: Buffer) => {
      answer += chunk.toString();
    });
    socket.on('error', (cause: NodeJS.ErrnoException) => {
      error = cause.code ?? cause.message;
    });
    socket.on('close', () => resolve({ answer, ...(error ? { error } : {}) }));
  });
}

describe('a burst of connections while the server is busy', () => {
  it('answers every connection once the server is free again, and the kernel resets none', {
    timeout: 60_000,
  }, async () => {
    const port = Number(new URL(server.address).port);
    const stalled = new Promise<void>((resolve) => {
      server.child.stdout.on('data', (chunk: Buffer) => {
        if (chunk.toString().includes('stalling')) resolve();
      });
    });
    server.child.kill('SIGUSR2');
    await stalled;

    const answers = await Promise.all(Array.from({ length: CLIENTS }, () => healthzLineByLine(port)));

    const failed = answers.filter(({ answer }) => !answer.startsWith('HTTP/1.1 200 '));
    const errors = [...new Set(failed.map(({ error }) => error ?? 'no answer'))];
    expect({ failed: failed.length, errors }).toEqual({ failed: 0, errors: [] });
  });
});
