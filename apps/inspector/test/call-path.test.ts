import type { CallEvent } from '@baton/contracts';
import { describe, expect, it } from 'vitest';
import { edgesOf, pathOf } from '../src/page/call-path.js';
import { describeProgress, formatDuration, fractionOf } from '../src/page/format.js';

const base = { callId: 'c', sessionId: 's', toolName: 't', at: 0 };
let seq = 0;
const event = (input: Record<string, unknown>): CallEvent => ({ ...base, seq: ++seq, ...input }) as CallEvent;

describe("a call's path through the machine, from its events", () => {
  it('goes queued, inline, backgrounded, succeeded for an auto call promoted at its budget', () => {
    const path = pathOf([
      event({ type: 'queued', mode: 'auto' }),
      event({ type: 'started', attempt: 1 }),
      event({ type: 'progress', progress: { current: 1 } }),
      event({ type: 'backgrounded', reason: 'budget', afterMs: 300 }),
      event({ type: 'succeeded', output: 1 }),
      event({ type: 'notification', notificationId: 'n', title: 'done' }),
    ]);
    expect(path).toEqual(['queued', 'inline', 'backgrounded', 'succeeded']);
    expect([...edgesOf(path)]).toEqual(['queued->inline', 'inline->backgrounded', 'backgrounded->succeeded']);
  });

  it('never passes through inline for a call that was backgrounded before it started', () => {
    const path = pathOf([
      event({ type: 'queued', mode: 'background' }),
      event({ type: 'backgrounded', reason: 'mode', afterMs: 0 }),
      event({ type: 'started', attempt: 1 }),
      event({ type: 'cancelled', reason: 'stop' }),
    ]);
    expect(path).toEqual(['queued', 'backgrounded', 'cancelled']);
  });
});

describe("a call's path, from the transitions its events carry", () => {
  it('follows from and to: a call detached in the queue starts in the background, a retry stays where it is', () => {
    const path = pathOf([
      event({ type: 'queued', mode: 'auto', to: 'queued' }),
      event({ type: 'backgrounded', reason: 'budget', afterMs: 300, from: 'queued', to: 'queued' }),
      event({ type: 'started', attempt: 1, from: 'queued', to: 'backgrounded' }),
      event({
        type: 'retrying',
        attempt: 2,
        delayMs: 10,
        error: { code: 'tool_error', message: 'x' },
        from: 'backgrounded',
        to: 'backgrounded',
      }),
      event({ type: 'started', attempt: 2, from: 'backgrounded', to: 'backgrounded' }),
      event({
        type: 'failed',
        error: { code: 'tool_error', message: 'x' },
        from: 'backgrounded',
        to: 'failed',
      }),
    ]);
    expect(path).toEqual(['queued', 'backgrounded', 'failed']);
    expect([...edgesOf(path)]).toEqual(['queued->backgrounded', 'backgrounded->failed']);
  });

  it('draws a recovered call queued again from where it was left', () => {
    const path = pathOf([
      event({ type: 'queued', mode: 'auto', to: 'queued' }),
      event({ type: 'started', attempt: 1, from: 'queued', to: 'inline' }),
      event({ type: 'queued', mode: 'auto', from: 'inline', to: 'queued' }),
      event({ type: 'started', attempt: 2, from: 'queued', to: 'inline' }),
      event({ type: 'succeeded', output: 1, from: 'inline', to: 'succeeded' }),
    ]);
    expect([...edgesOf(path)]).toEqual(['queued->inline', 'inline->queued', 'inline->succeeded']);
  });
});

describe('how the table shows time and progress', () => {
  it('formats durations and progress', () => {
    expect(formatDuration(12)).toBe('12 ms');
    expect(formatDuration(2_345)).toBe('2.3 s');
    expect(formatDuration(125_000)).toBe('2 m 05 s');
    expect(fractionOf({ current: 1, total: 4 })).toBe(0.25);
    expect(fractionOf({ current: 3 })).toBeUndefined();
    expect(describeProgress({ current: 2, total: 3, unit: 'second' })).toBe('2 / 3 second');
  });
});
