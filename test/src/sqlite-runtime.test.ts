import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineTool } from '@baton/contracts';
import { createRuntime } from '@baton/runtime';
import { SimulatedClock } from '@baton/runtime/testing';
import { sqliteStore } from '@baton/store-sqlite';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';

const dir = mkdtempSync(join(tmpdir(), 'baton-sqlite-runtime-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the runtime on SQLite', () => {
  it('answers backgrounded and terminal replies only once another connection can read their state', async () => {
    const path = join(dir, 'replies.db');
    let finish: (value: string) => void = () => {};
    const slow = defineTool({
      name: 'slow',
      description: 's',
      input: z.object({}),
      execution: { mode: 'auto' },
      execute: () => new Promise<string>((resolve) => (finish = resolve)),
    });
    const clock = new SimulatedClock();
    const runtime = createRuntime({ tools: [slow], store: sqliteStore({ path }), clock });
    const observer = sqliteStore({ path });
    const pending = runtime.call({ name: 'slow', sessionId: 's' });
    await new Promise((resolve) => setImmediate(resolve));
    clock.increment(300);
    const reply = await pending;
    expect(reply.status).toBe('backgrounded');
    expect((await observer.getCall(reply.callId))?.status).toBe('backgrounded');
    finish('done');
    const notified = new Promise((resolve) =>
      runtime.events$.subscribe((event) => event.type === 'notification' && resolve(event)),
    );
    await notified;
    expect((await observer.getCall(reply.callId))?.status).toBe('succeeded');
    expect((await observer.listNotifications({ sessionId: 's' })).map((n) => n.title)).toEqual([
      'Task completed: Background tool: slow',
    ]);
    await runtime.close();
    await observer.close();
  });

  it('runs 1,000 calls in flight, each written in its terminal state before its reply', async () => {
    const path = join(dir, 'many.db');
    const echo = defineTool({
      name: 'echo',
      description: 'e',
      input: z.object({ i: z.number() }),
      execute: async ({ i }) => i,
    });
    const runtime = createRuntime({ tools: [echo], store: sqliteStore({ path }) });
    const replies = await Promise.all(
      Array.from({ length: 1_000 }, (_, i) =>
        runtime.call({ name: 'echo', args: { i }, sessionId: `s${i % 10}` }),
      ),
    );
    expect(replies.map((reply) => reply.output)).toEqual(Array.from({ length: 1_000 }, (_, i) => i));
    const observer = sqliteStore({ path });
    const stored = (await observer.listCalls({ limit: 2_000, status: 'succeeded' })).calls;
    expect(stored).toHaveLength(1_000);
    await runtime.close();
    await observer.close();
  });
});
