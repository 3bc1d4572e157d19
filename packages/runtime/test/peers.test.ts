import type { CallEvent } from '@baton/contracts';
import { defineTool } from '@baton/contracts';
import { makeCallRecord, makeInstance } from '@baton/store/testing';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Logger } from '../src/index.js';
import { gatedTool, settle, sharedStore, testRuntime } from './helpers.js';

const numbered = (events: readonly CallEvent[]) => events.map((event) => [event.seq, event.type]);

/** A logger that keeps each line at warn and info. */
function lines() {
  const said: { level: 'warn' | 'info'; message: string }[] = [];
  const logger: Logger = {
    error: () => {},
    warn: (_fields, message) => said.push({ level: 'warn', message: message ?? '' }),
    info: (_fields, message) => said.push({ level: 'info', message: message ?? '' }),
    debug: () => {},
  };
  return { said, logger };
}

describe('processes of two versions on one store', () => {
  it('a client stores the queued event of its calls itself while a process of an earlier version is live, and stops once it is gone', async () => {
    const { store, tell } = sharedStore({ answers: true });
    const { said, logger } = lines();
    const { tool, runs } = gatedTool('work');
    // A worker of a version before protocols were kept: its row has none.
    await store.registerInstance(
      makeInstance({ id: 'earlier', heartbeatAt: 0, leaseMs: 3_600_000, protocol: 0 }),
    );
    const client = testRuntime([tool], { store, role: 'client', logger, leaseMs: 3_000 });
    await client.runtime.ready;
    const first = client.runtime.call({ name: 'work', args: {}, sessionId: 's', callId: 'c1' });
    await settle();
    // What a worker of the earlier version expects: the call's first event, stored by its client.
    expect(numbered(await store.listEvents('c1'))).toEqual([[1, 'queued']]);
    for (let beat = 0; beat < 5; beat++) {
      client.clock.increment(1_000);
      await settle();
    }
    expect(said).toEqual([
      {
        level: 'warn',
        message:
          "baton: processes on the store speak another protocol than this one's 3, 1 of an earlier Baton (protocol 0): served in their words until they are gone",
      },
    ]);

    // A worker of this version takes such a call up after its queued event, numbering on from it.
    const worker = testRuntime([tool], { store, role: 'worker' });
    await worker.runtime.ready;
    tell({ type: 'queued' });
    await settle();
    runs[0]?.resolve('done');
    await settle();
    tell({ type: 'events', callIds: ['c1'], sessionIds: ['s'], writer: worker.runtime.instanceId });
    expect(await first).toMatchObject({ status: 'succeeded', output: 'done' });
    expect(numbered(await store.listEvents('c1'))).toEqual([
      [1, 'queued'],
      [2, 'started'],
      [3, 'succeeded'],
    ]);

    await store.removeInstance('earlier');
    client.clock.increment(1_000);
    await settle();
    expect(said.slice(1)).toEqual([
      { level: 'info', message: 'baton: every process on the store speaks protocol 3 now' },
    ]);
    void client.runtime.call({ name: 'work', args: {}, sessionId: 's', callId: 'c2' });
    await settle();
    expect(await store.listEvents('c2')).toEqual([]);
  });

  it("keeps a running call's updates off the notifications while a process of protocol 2 is live, which takes one for the end", async () => {
    const { store, tell } = sharedStore({ answers: true });
    await store.registerInstance(
      makeInstance({ id: 'earlier', heartbeatAt: 0, leaseMs: 3_600_000, protocol: 2 }),
    );
    const updating = defineTool({
      name: 'updating',
      description: 'Tells an update, then waits',
      input: z.object({}),
      execution: { mode: 'background' },
      execute: (_args, ctx) => {
        ctx.update('half way');
        return new Promise(() => {});
      },
    });
    const worker = testRuntime([updating], { store, role: 'worker', leaseMs: 3_000 });
    await worker.runtime.ready;
    await store.write({
      calls: [
        makeCallRecord({
          callId: 'u1',
          toolName: 'updating',
          attempt: 0,
          detached: true,
          mode: 'background',
        }),
      ],
    });
    tell({ type: 'queued' });
    await settle();
    expect((await store.getCall('u1'))?.update?.value).toBe('half way');
    expect(await store.listNotifications()).toEqual([]);
  });

  it('a worker says in one line that a process of a newer version shares the store', async () => {
    const { store } = sharedStore({ answers: true });
    const { said, logger } = lines();
    await store.registerInstance(
      makeInstance({ id: 'newer', heartbeatAt: 0, leaseMs: 3_600_000, protocol: 4 }),
    );
    const { tool } = gatedTool('work');
    const worker = testRuntime([tool], { store, role: 'worker', logger, leaseMs: 3_000, pollMs: 500 });
    await worker.runtime.ready;
    for (let tick = 0; tick < 5; tick++) {
      worker.clock.increment(1_000);
      await settle();
    }
    expect(said).toEqual([
      {
        level: 'warn',
        message:
          "baton: processes on the store speak another protocol than this one's 3, 1 of a newer Baton (protocol 4): roll this one forward",
      },
    ]);
  });
});
