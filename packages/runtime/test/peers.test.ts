import { makeInstance } from '@baton/store/testing';
import { describe, expect, it } from 'vitest';
import type { Logger } from '../src/index.js';
import { gatedTool, settle, sharedStore, testRuntime } from './helpers.js';

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
  it('a client says in one line that a process of an earlier version shares the store, and again once it is gone', async () => {
    const { store } = sharedStore({ answers: true });
    const { said, logger } = lines();
    const { tool } = gatedTool('work');
    // A process that registered no protocol: its row has the column's default.
    await store.registerInstance(
      makeInstance({ id: 'earlier', heartbeatAt: 0, leaseMs: 3_600_000, protocol: 0 }),
    );
    const client = testRuntime([tool], { store, role: 'client', logger, leaseMs: 3_000 });
    await client.runtime.ready;
    for (let beat = 0; beat < 5; beat++) {
      client.clock.increment(1_000);
      await settle();
    }
    expect(said).toEqual([
      {
        level: 'warn',
        message:
          "baton: processes on the store speak another protocol than this one's 1, 1 of an earlier Baton (protocol 0): roll them forward",
      },
    ]);
    await store.removeInstance('earlier');
    client.clock.increment(1_000);
    await settle();
    expect(said.slice(1)).toEqual([
      { level: 'info', message: 'baton: every process on the store speaks protocol 1 now' },
    ]);
  });

  it('a worker says in one line that a process of a newer version shares the store', async () => {
    const { store } = sharedStore({ answers: true });
    const { said, logger } = lines();
    await store.registerInstance(
      makeInstance({ id: 'newer', heartbeatAt: 0, leaseMs: 3_600_000, protocol: 2 }),
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
          "baton: processes on the store speak another protocol than this one's 1, 1 of a newer Baton (protocol 2): roll this one forward",
      },
    ]);
  });
});
