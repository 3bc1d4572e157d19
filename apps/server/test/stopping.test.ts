import { defineTool } from '@baton/contracts';
import { createRuntime } from '@baton/runtime';
import { deferred } from '@baton/runtime/testing';
import { memoryStore, type Store } from '@baton/store';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createServer } from '../src/server.js';
import { STOPPED_BEFORE_ANSWERING, serverStop } from '../src/stopping.js';

/**
 * A server whose store leaves the reads of some calls hanging until the test lets them go (a
 * database blackholed), and a tool that runs until it is told to end.
 */
async function serverWithStuckReads() {
  const memory = memoryStore();
  const stuck = new Map<string, Promise<void>>();
  const store: Store = Object.assign(Object.create(memory), {
    async getCall(callId: string) {
      await stuck.get(callId);
      return memory.getCall(callId);
    },
  });
  const ending = deferred<void>();
  const slow = defineTool({
    name: 'slow',
    description: 'Runs until the test ends it',
    input: z.object({}),
    execution: { mode: 'background' as const },
    async execute() {
      await ending.promise;
      return 'done';
    },
  });
  const runtime = createRuntime({ tools: [slow], store });
  await runtime.ready;
  const app = createServer({ runtime });
  const stop = serverStop(runtime, app, { drainMs: 10_000, lastAnswersMs: 300 });
  const base = await app.listen({ host: '127.0.0.1', port: 0 });
  const hang = (callId: string) => {
    const gate = deferred<void>();
    stuck.set(callId, gate.promise);
    return () => gate.resolve();
  };
  return { runtime, base, stop, hang, endTool: () => ending.resolve() };
}

describe('a server that stops answers every request under way, and resets none', () => {
  it('closes the connection of an answer given during the drain, answers 503 a request its store never answered, and ends an event stream', async () => {
    const { runtime, base, stop, hang, endTool } = await serverWithStuckReads();
    // A live call keeps the drain going.
    const started = await fetch(`${base}/v1/calls`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'slow', args: {}, sessionId: 's' }),
    });
    const { callId } = (await started.json()) as { callId: string };
    // Three requests under way as the stop begins: one its store answers during the drain, one
    // its store never answers, and an event stream.
    const letSlowGo = hang('slow-read');
    hang('never-read');
    const answeredInDrain = fetch(`${base}/v1/calls/slow-read`);
    const neverAnswered = fetch(`${base}/v1/calls/never-read`);
    const stream = await fetch(`${base}/v1/calls/${callId}/events`);
    expect(stream.status).toBe(200);
    const stopped = stop();
    await expect.poll(() => runtime.closing).toBe(true);
    letSlowGo();
    const inDrain = await answeredInDrain;
    expect(inDrain.status).toBe(404);
    expect(inDrain.headers.get('connection')).toBe('close');
    endTool();
    const refused = await neverAnswered;
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('5');
    expect(await refused.json()).toEqual({
      error: { code: 'shutting_down', message: STOPPED_BEFORE_ANSWERING },
    });
    // The stream ends as a stream does (its client comes back from its last event), not cut.
    const events = await stream.text();
    expect(events).toContain('event: ');
    await stopped;
  }, 20_000);
});
