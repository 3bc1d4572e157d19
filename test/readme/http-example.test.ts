/**
 * The root README's "A slow call over HTTP", run as written against the built server: each `curl`
 * of its block (the address made the test server's), and what its comments say comes back.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ServerProcess, startServer } from '@baton/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const README = join(import.meta.dirname, '..', '..', 'README.md');

/** The commands of the README's block under `heading`: each `curl`, its `\` continuations joined. */
function curlsUnder(heading: string): string[] {
  const text = readFileSync(README, 'utf8');
  const from = text.indexOf(`## ${heading}\n`);
  if (from < 0) throw new Error(`the README has no section "${heading}"`);
  const block = /```sh\n([\s\S]*?)```/.exec(text.slice(from))?.[1] ?? '';
  return block
    .replace(/\\\n\s*/g, '')
    .split('\n')
    .filter((line) => line.startsWith('curl '));
}

let server: ServerProcess;
beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => {
  await server?.stop();
});

describe("the README's slow call over HTTP", () => {
  it('is answered backgrounded at once, and its end is then a queued notification of its session', async () => {
    const [call, notifications, ...more] = curlsUnder('A slow call over HTTP');
    expect(more).toEqual([]);
    const run = (command: string) =>
      execFileSync(
        'sh',
        ['-c', command.replaceAll('localhost:8787', server.address.replace(/^http:\/\//, ''))],
        {
          encoding: 'utf8',
        },
      );
    const reply = JSON.parse(run(call ?? '')) as { callId: string; status: string };
    expect(reply.status).toBe('backgrounded');
    // Its end comes about a second later (the tool works for one): read until it is there.
    const deadline = Date.now() + 30_000;
    for (;;) {
      const listed = JSON.parse(run(notifications ?? '')) as Array<{ callId: string; outcome: string }>;
      const ended = listed.filter((notification) => notification.outcome !== 'running');
      if (ended.length > 0) {
        expect(ended).toEqual([expect.objectContaining({ callId: reply.callId, outcome: 'succeeded' })]);
        break;
      }
      expect(Date.now()).toBeLessThan(deadline);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  });
});
