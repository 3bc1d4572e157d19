import type { CallEvent } from '@baton/contracts';
import { memoryStore, type SessionEvent } from '@baton/store';
import { makeCallRecord } from '@baton/store/testing';
import { describe, expect, it } from 'vitest';
import { deferred } from '../src/testing.js';
import { gatedTool, settle, testRuntime } from './helpers.js';

const label = (event: CallEvent) => `${event.callId}:${event.type}`;

describe('following stored events', () => {
  it("gives a call's stored events, then its live ones; resuming after a seq gives the rest once", async () => {
    const { tool, runs } = gatedTool('work', { mode: 'background' });
    const { runtime } = testRuntime([tool]);
    await runtime.call({ name: 'work', sessionId: 's', callId: 'c1' });
    await settle();
    const first: CallEvent[] = [];
    const subscription = runtime.follow({ callId: 'c1' }).subscribe((event) => first.push(event));
    await settle();
    expect(first.map((event) => event.type)).toEqual(['queued', 'backgrounded', 'started']);
    subscription.unsubscribe();

    runs[0]?.resolve({ ok: true });
    await settle();
    const resumed: CallEvent[] = [];
    runtime.follow({ callId: 'c1', after: first.at(-1)?.seq }).subscribe((event) => resumed.push(event));
    await settle();
    expect(resumed.map((event) => event.type)).toEqual(['succeeded', 'notification']);
    expect([...first, ...resumed].map((event) => event.seq)).toEqual([1, 2, 3, 4, 5]);
  });

  it("gives a session's events across its calls in stored order, and resumes from a position without a gap or a repeat", async () => {
    const { tool, runs } = gatedTool('work', { mode: 'background' });
    const { runtime } = testRuntime([tool]);
    const seen: SessionEvent[] = [];
    const live = runtime.follow({ sessionId: 's' }).subscribe((stored) => seen.push(stored));
    await runtime.call({ name: 'work', sessionId: 's', callId: 'a' });
    await runtime.call({ name: 'work', sessionId: 'other', callId: 'x' });
    await settle();
    live.unsubscribe();

    // While nobody follows, both calls move on.
    await runtime.call({ name: 'work', sessionId: 's', callId: 'b' });
    runs[0]?.resolve('a done');
    await settle();
    const resumed: SessionEvent[] = [];
    runtime
      .follow({ sessionId: 's', after: seen.at(-1)?.position })
      .subscribe((stored) => resumed.push(stored));
    await settle();
    runs[2]?.resolve('b done');
    await settle();

    const all = [...seen, ...resumed];
    expect(all.map(({ event }) => label(event))).toEqual([
      'a:queued',
      'a:backgrounded',
      'a:started',
      'b:queued',
      'b:backgrounded',
      'b:started',
      'a:succeeded',
      'a:notification',
      'b:succeeded',
      'b:notification',
    ]);
    expect(resumed.length).toBeGreaterThan(0);
    const positions = all.map(({ position }) => position);
    expect(new Set(positions).size).toBe(positions.length);
    expect([...positions].sort((p, q) => p - q)).toEqual(positions);
  });

  it("follows a call of this process from its bus, reading the store only to begin; a fresh call's not even then", async () => {
    const { tool, runs } = gatedTool('work', { mode: 'background' });
    const store = memoryStore();
    let reads = 0;
    const listEvents = store.listEvents.bind(store);
    store.listEvents = (...args) => {
      reads++;
      return listEvents(...args);
    };
    const { runtime } = testRuntime([tool], { store });
    const seen: CallEvent[] = [];
    runtime.follow({ callId: 'c1' }, { fresh: true }).subscribe((event) => seen.push(event));
    await runtime.call({ name: 'work', sessionId: 's', callId: 'c1' });
    await settle();
    runs[0]?.resolve('done');
    await settle();
    expect(seen.map((event) => event.type)).toEqual([
      'queued',
      'backgrounded',
      'started',
      'succeeded',
      'notification',
    ]);
    expect(seen.map((event) => event.seq)).toEqual([1, 2, 3, 4, 5]);
    expect(reads).toBe(0);

    const later: CallEvent[] = [];
    runtime.follow({ callId: 'c1' }).subscribe((event) => later.push(event));
    await settle();
    expect(later).toEqual(seen);
    expect(reads).toBe(1);
  });

  it('replays a long history a page at a time, and reads the next page only when the consumer is ready', async () => {
    const store = memoryStore();
    const { runtime } = testRuntime([], { store });
    await runtime.ready;
    const events: CallEvent[] = Array.from({ length: 1_000 }, (_, i) => ({
      type: 'status',
      text: `step ${i}`,
      callId: 'long',
      sessionId: 's',
      toolName: 't',
      seq: i + 1,
      at: i,
    }));
    await store.write({ calls: [makeCallRecord({ callId: 'long', sessionId: 's' })], events });
    const pages: number[] = [];
    const read = store.listSessionEvents.bind(store);
    store.listSessionEvents = async (sessionId, after, limit) => {
      const page = await read(sessionId, after, limit);
      pages.push(page.length);
      return page;
    };
    let open = deferred();
    const seen: SessionEvent[] = [];
    runtime
      .follow({ sessionId: 's', after: 0 }, { ready: () => open.promise })
      .subscribe((stored) => seen.push(stored));
    await settle();
    // The consumer is not ready: nothing is read.
    expect(pages).toEqual([]);
    for (let page = 1; page <= 5; page++) {
      open.resolve();
      open = deferred();
      await settle();
      expect(seen).toHaveLength(page * 200);
    }
    open.resolve();
    await settle();
    expect(pages).toEqual([200, 200, 200, 200, 200, 0]);
    expect(seen.map(({ event }) => event.seq)).toEqual(events.map((event) => event.seq));
  });
});
