import type { CallEvent } from '@baton/contracts';
import { describe, expect, it } from 'vitest';
import { EventBus } from '../src/index.js';

const status = (callId: string, sessionId: string, seq: number): CallEvent => ({
  type: 'status',
  callId,
  sessionId,
  toolName: 't',
  seq,
  at: seq,
  text: `${callId}#${seq}`,
});

describe('EventBus', () => {
  it('delivers every event on events$, and each call and session only its own', () => {
    const bus = new EventBus();
    const all: string[] = [];
    const callA: string[] = [];
    const session2: string[] = [];
    bus.events$.subscribe((event) => all.push(event.callId));
    bus.call$('a').subscribe((event) => callA.push(event.callId));
    bus.session$('s2').subscribe((event) => session2.push(event.callId));
    bus.publish(status('a', 's1', 1));
    bus.publish(status('b', 's2', 1));
    bus.publish(status('a', 's1', 2));
    bus.publish(status('c', 's2', 1));
    expect(all).toEqual(['a', 'b', 'a', 'c']);
    expect(callA).toEqual(['a', 'a']);
    expect(session2).toEqual(['b', 'c']);
  });

  it('keeps a route only while someone listens to it', () => {
    const bus = new EventBus();
    const first = bus.call$('a').subscribe();
    const second = bus.call$('a').subscribe();
    const session = bus.session$('s').subscribe();
    expect(bus.routeCount()).toBe(2);
    first.unsubscribe();
    expect(bus.routeCount()).toBe(2);
    second.unsubscribe();
    session.unsubscribe();
    expect(bus.routeCount()).toBe(0);
  });

  it('completes every stream and lets go of every subscriber on complete()', () => {
    const bus = new EventBus();
    const completed: string[] = [];
    bus.events$.subscribe({ complete: () => completed.push('all') });
    bus.call$('a').subscribe({ complete: () => completed.push('call') });
    bus.session$('s').subscribe({ complete: () => completed.push('session') });
    bus.complete();
    expect(completed.sort()).toEqual(['all', 'call', 'session']);
    expect(bus.routeCount()).toBe(0);
  });

  it('routes 10,000 per-call subscribers by key: each sees only its own call', () => {
    const bus = new EventBus();
    const seen = new Map<string, number>();
    for (let i = 0; i < 10_000; i++) {
      const callId = `c${i}`;
      bus.call$(callId).subscribe(() => seen.set(callId, (seen.get(callId) ?? 0) + 1));
    }
    bus.publish(status('c42', 's', 1));
    bus.publish(status('c9999', 's', 1));
    expect([...seen]).toEqual([
      ['c42', 1],
      ['c9999', 1],
    ]);
  });
});

describe('the failures channel', () => {
  it('carries the failures the runtime handled to whoever counts them, and completes with the bus', () => {
    const bus = new EventBus();
    const seen: string[] = [];
    let completed = false;
    bus.failures$.subscribe({
      next: (failure) => seen.push(`${failure.op}:${failure.callId}`),
      complete: () => {
        completed = true;
      },
    });
    bus.publishFailure({ op: 'heartbeat', error: new Error('down'), at: 1 });
    bus.publishFailure({ op: 'write', callId: 'c1', error: new Error('full'), at: 2 });
    bus.complete();
    expect(seen).toEqual(['heartbeat:undefined', 'write:c1']);
    expect(completed).toBe(true);
  });
});
