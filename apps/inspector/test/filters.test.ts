import type { CallRecord } from '@baton/contracts';
import { describe, expect, it } from 'vitest';
import { type Filters, matches } from '../src/page/calls-table.js';

const NOW = 1_800_000_000_000;
const record = (minutesAgo: number): CallRecord => ({
  callId: `c-${minutesAgo}`,
  sessionId: 'demo',
  toolName: 'echo',
  args: {},
  status: 'succeeded',
  mode: 'inline',
  detached: false,
  attempt: 1,
  createdAt: NOW - minutesAgo * 60_000,
  outputTail: '',
});
const filters = (within: string): Filters => ({ search: '', state: '', tool: '', within });

describe('the time-range filter of the calls table', () => {
  it('keeps the calls admitted within the range chosen, and every call at any time', () => {
    const calls = [record(1), record(10), record(120)];
    const kept = (within: string) =>
      calls.filter((call) => matches(call, filters(within), NOW)).map((call) => call.callId);
    expect(kept('300000')).toEqual(['c-1']);
    expect(kept('3600000')).toEqual(['c-1', 'c-10']);
    expect(kept('')).toEqual(['c-1', 'c-10', 'c-120']);
  });
});
