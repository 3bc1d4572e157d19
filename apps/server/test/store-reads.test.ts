import { createRuntime } from '@baton/runtime';
import { memoryStore, type Store } from '@baton/store';
import { describe, expect, it } from 'vitest';
import { demoTools } from '../src/demo-tools.js';
import { createServer } from '../src/server.js';

/** A memory store that counts its reads, by method. */
function countingStore() {
  const reads = new Map<string, number>();
  const memory = memoryStore();
  const store = new Proxy(memory, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver);
      if (typeof value !== 'function' || typeof name !== 'string' || !/^(get|list|count)/.test(name))
        return value;
      return (...args: unknown[]) => {
        reads.set(name, (reads.get(name) ?? 0) + 1);
        return value.apply(target, args);
      };
    },
  }) as Store;
  return { store, reads };
}

describe('what a call costs the store in reads', () => {
  it('reads nothing for a REST call whose id the server made', async () => {
    const { store, reads } = countingStore();
    const runtime = createRuntime({ tools: demoTools, store });
    await runtime.ready;
    const app = createServer({ runtime });
    try {
      reads.clear();
      for (let n = 0; n < 10; n++) {
        const response = await app.inject({
          method: 'POST',
          url: '/v1/calls',
          payload: { name: 'echo', args: { text: `hello ${n}` }, sessionId: 's' },
        });
        expect(response.json()).toMatchObject({ status: 'succeeded' });
      }
      expect(Object.fromEntries(reads)).toEqual({});
    } finally {
      await app.close();
      await runtime.close();
    }
  });
});
