import { memoryStore, type NoticeTopic, type Store, type StoreNotice } from '@baton/store';
import { describe, expect, it } from 'vitest';
import { gatedTool, testRuntime } from './helpers.js';

/**
 * A memory store that says it is shared: it keeps the topics listened to now, and tells each
 * listener `listening` only when `answers` is true (as a store whose LISTEN connection is up).
 */
function sharedStore({ answers }: { answers: boolean }) {
  const listened: NoticeTopic[] = [];
  const store: Store = Object.assign(Object.create(memoryStore()), {
    listen(listener: (notice: StoreNotice) => void, topic: NoticeTopic) {
      listened.push(topic);
      if (answers) queueMicrotask(() => listener({ type: 'listening' }));
      return () => listened.splice(listened.indexOf(topic), 1);
    },
    async send() {},
  });
  return { store, listened };
}

describe('the notices a runtime listens to on a shared store', () => {
  it('hears the events of all only while something follows, and for a poll after', async () => {
    const { store, listened } = sharedStore({ answers: true });
    const { runtime, clock } = testRuntime([gatedTool('work').tool], { store, pollMs: 1_000 });
    await runtime.ready;
    // Calls to run and requests: no process is woken by every commit of the others for nothing.
    expect(listened).toEqual([{ type: 'work' }]);
    const first = runtime.follow({ callId: 'c1' }).subscribe();
    const second = runtime.follow({ sessionId: 's' }).subscribe();
    expect(listened).toEqual([{ type: 'work' }, { type: 'events' }]);
    first.unsubscribe();
    second.unsubscribe();
    // A follower that comes back within a poll finds the topic still listened to.
    clock.increment(999);
    const again = runtime.follow({ callId: 'c1' }).subscribe();
    again.unsubscribe();
    clock.increment(999);
    expect(listened).toEqual([{ type: 'work' }, { type: 'events' }]);
    clock.increment(1);
    expect(listened).toEqual([{ type: 'work' }]);
  });

  it('makes a client ready once it hears its replies, or after a poll if its store never says so', async () => {
    const heard = sharedStore({ answers: true });
    const { runtime: client } = testRuntime([gatedTool('work').tool], { store: heard.store, role: 'client' });
    await client.ready;
    expect(heard.listened).toEqual([{ type: 'replies', to: client.instanceId }]);

    const deaf = sharedStore({ answers: false });
    const { runtime: waiting, clock } = testRuntime([gatedTool('work').tool], {
      store: deaf.store,
      role: 'client',
      pollMs: 1_000,
    });
    let ready = false;
    void waiting.ready.then(() => {
      ready = true;
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(ready).toBe(false);
    clock.increment(1_000);
    await waiting.ready;
    expect(ready).toBe(true);
  });
});
