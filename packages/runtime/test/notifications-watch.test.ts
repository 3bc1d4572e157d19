import type { Notification, RuntimeFailure } from '@baton/contracts';
import { memoryStore } from '@baton/store';
import { describe, expect, it } from 'vitest';
import { gatedTool, settle, testRuntime } from './helpers.js';

/** A runtime with a `background` tool `research` whose runs end when the test says. */
function setUp() {
  const research = gatedTool('research', { mode: 'background' });
  return { ...testRuntime([research.tool]), runs: research.runs };
}

describe('notifications.watch: the results to start a turn with, as they come', () => {
  it("gives a session's queued notifications first, then each new one once, and none of another session", async () => {
    const { runtime, runs } = setUp();
    await runtime.call({ name: 'research', args: { n: 1 }, sessionId: 'chat' });
    await settle();
    runs[0]?.resolve('first');
    await settle();

    const seen: Notification[] = [];
    const watching = runtime.notifications.watch({ sessionId: 'chat' }).subscribe((n) => seen.push(n));
    await settle();
    expect(seen.map((n) => n.body.split('\n').at(-1))).toEqual(['first']);

    await runtime.call({ name: 'research', args: { n: 2 }, sessionId: 'chat' });
    await runtime.call({ name: 'research', args: { n: 3 }, sessionId: 'elsewhere' });
    await settle();
    runs[1]?.resolve('second');
    runs[2]?.resolve('not mine');
    await settle();
    expect(seen.map((n) => n.body.split('\n').at(-1))).toEqual(['first', 'second']);
    watching.unsubscribe();
  });

  it('gives nothing a loop took before it was read, and watches every session under a prefix', async () => {
    const { runtime, runs } = setUp();
    const seen: string[] = [];
    const watching = runtime.notifications
      .watch({ sessionPrefix: 'acme/' })
      .subscribe((n) => seen.push(n.sessionId));
    await runtime.call({ name: 'research', sessionId: 'acme/a' });
    await runtime.call({ name: 'research', sessionId: 'acme/b' });
    await runtime.call({ name: 'research', sessionId: 'bolt/a' });
    await settle();
    for (const run of runs) run.resolve('done');
    await settle();
    expect(seen.sort()).toEqual(['acme/a', 'acme/b']);
    watching.unsubscribe();

    // Taken by the agent loop already: a new watcher is not given it.
    await runtime.notifications.take({ sessionId: 'acme/a', idle: true });
    const later: string[] = [];
    runtime.notifications.watch({ sessionPrefix: 'acme/' }).subscribe((n) => later.push(n.sessionId));
    await settle();
    expect(later).toEqual(['acme/b']);
  });

  it('reports a read the store refused and goes on; completes when the runtime closes', async () => {
    const research = gatedTool('research', { mode: 'background' });
    const store = memoryStore();
    const listNotifications = store.listNotifications.bind(store);
    let refuse = true;
    store.listNotifications = (...args) => {
      if (refuse) {
        refuse = false;
        return Promise.reject(new Error('the store is away'));
      }
      return listNotifications(...args);
    };
    const { runtime } = testRuntime([research.tool], { store });
    const failures: RuntimeFailure[] = [];
    runtime.failures$.subscribe((failure) => failures.push(failure));
    const seen: string[] = [];
    let completed = false;
    runtime.notifications
      .watch({ sessionId: 'chat' })
      .subscribe({ next: (n) => seen.push(n.callId), complete: () => (completed = true) });
    await settle();
    expect(failures.map(({ op, error }) => [op, (error as Error).message])).toEqual([
      ['watch notifications', 'the store is away'],
    ]);
    await runtime.call({ name: 'research', sessionId: 'chat', callId: 'after' });
    await settle();
    research.runs[0]?.resolve('done');
    await settle();
    expect(seen).toEqual(['after']);
    expect(completed).toBe(false);
    await runtime.close();
    expect(completed).toBe(true);
  });
});

describe("notifications.watch: the subscriber's own async context", () => {
  it('calls the subscriber in the context it subscribed in, not in the context of the call that ended', async () => {
    const { AsyncLocalStorage } = await import('node:async_hooks');
    const turn = new AsyncLocalStorage<string>();
    const research = gatedTool('research', { mode: 'background' });
    const { runtime } = testRuntime([research.tool]);
    const seenIn: Array<string | undefined> = [];
    const watching = turn.run('the app', () =>
      runtime.notifications.watch({ sessionId: 'chat' }).subscribe(() => seenIn.push(turn.getStore())),
    );
    // The call is made, and ends, inside a turn of its own (a tool run inside an agent's step).
    await turn.run('the tool call', async () => {
      await runtime.call({ name: 'research', sessionId: 'chat' });
      research.runs[0]?.resolve('done');
      await settle();
    });
    await settle();
    expect(seenIn).toEqual(['the app']);
    watching.unsubscribe();
  });
});
