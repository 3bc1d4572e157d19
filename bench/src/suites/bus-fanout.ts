import { EventBus } from '@baton/bus';
import type { CallEvent } from '@baton/contracts';
import { filter, Subject } from 'rxjs';
import type { BenchConfig } from '../config.js';
import { atLeast, type Row } from '../measure.js';

function progress(callId: string, seq: number): CallEvent {
  return { type: 'progress', callId, sessionId: 's', toolName: 't', seq, at: 0, progress: { current: seq } };
}

/** Progress events delivered per second with one subscriber per call: routed by key, beside a filter per subscriber. */
export async function busFanOut(config: BenchConfig): Promise<Row[]> {
  const callIds = Array.from({ length: config.subscribers }, (_, i) => `call-${i}`);
  const events = Array.from({ length: 1_000 }, (_, i) =>
    progress(callIds[(i * 7919) % callIds.length] as string, i),
  );
  const routed: number[] = [];
  const filtered: number[] = [];
  for (let round = 0; round < config.rounds; round++) {
    const bus = new EventBus();
    let delivered = 0;
    const subscriptions = callIds.map((callId) => bus.call$(callId).subscribe(() => delivered++));
    let started = performance.now();
    for (let i = 0; i < config.busEvents; i++) bus.publish(events[i % events.length] as CallEvent);
    routed.push(delivered / ((performance.now() - started) / 1_000));
    for (const subscription of subscriptions) subscription.unsubscribe();

    // The naive bus: one stream, and every subscriber filters every event.
    const all = new Subject<CallEvent>();
    let seen = 0;
    const naive = callIds.map((callId) =>
      all.pipe(filter((event) => event.callId === callId)).subscribe(() => seen++),
    );
    const naiveEvents = Math.max(100, Math.floor(config.busEvents / 1_000));
    started = performance.now();
    for (let i = 0; i < naiveEvents; i++) all.next(events[i % events.length] as CallEvent);
    filtered.push(seen / ((performance.now() - started) / 1_000));
    for (const subscription of naive) subscription.unsubscribe();
  }
  const measure = `6. bus fan-out, ${config.subscribers} per-call subscribers`;
  return [
    {
      measure,
      subject: 'routed by key (Baton)',
      unit: 'events/s',
      values: routed,
      comparedWith: 'a filter per subscriber',
      target: atLeast(1_000_000, 'events/s'),
    },
    { measure, subject: 'a filter per subscriber', unit: 'events/s', values: filtered },
  ];
}
