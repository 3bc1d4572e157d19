import type { CallEvent } from '@baton/contracts';
import type { SessionEvent } from '@baton/store';
import { describe, expect, it } from 'vitest';
import { gatedTool, settle, testRuntime } from './helpers.js';

const label = (event: CallEvent) => `${event.callId}:${event.type}`;

describe('following stored events', () => {
  it("gives a call's stored events, then its live ones; resuming after a seq gives the rest once", async () => {
    const { tool, runs } = gatedTool('work', { mode: 'background' });
    const { runtime } = testRuntime([tool]);
    await runtime.call({ name: 'work', sessionId: 's', callId: 'c1' });
    await settle();
    const first: CallEvent[] = [];
    const subscription = runtime.followCall('c1').subscribe((event) => first.push(event));
    await settle();
    expect(first.map((event) => event.type)).toEqual(['queued', 'backgrounded', 'started']);
    subscription.unsubscribe();

    runs[0]?.resolve({ ok: true });
    await settle();
    const resumed: CallEvent[] = [];
    runtime.followCall('c1', first.at(-1)?.seq).subscribe((event) => resumed.push(event));
    await settle();
    expect(resumed.map((event) => event.type)).toEqual(['succeeded', 'notification']);
    expect([...first, ...resumed].map((event) => event.seq)).toEqual([1, 2, 3, 4, 5]);
  });

  it("gives a session's events across its calls in stored order, and resumes from a position without a gap or a repeat", async () => {
    const { tool, runs } = gatedTool('work', { mode: 'background' });
    const { runtime } = testRuntime([tool]);
    const seen: SessionEvent[] = [];
    const live = runtime.followSession('s').subscribe((stored) => seen.push(stored));
    await runtime.call({ name: 'work', sessionId: 's', callId: 'a' });
    await runtime.call({ name: 'work', sessionId: 'other', callId: 'x' });
    await settle();
    live.unsubscribe();

    // While nobody follows, both calls move on.
    await runtime.call({ name: 'work', sessionId: 's', callId: 'b' });
    runs[0]?.resolve('a done');
    await settle();
    const resumed: SessionEvent[] = [];
    runtime.followSession('s', seen.at(-1)?.position).subscribe((stored) => resumed.push(stored));
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
});
