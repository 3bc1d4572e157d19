import type { CallEvent } from '@baton/contracts';

/**
 * Like a primary key on (call, seq): a batch that repeats a seq is refused whole, before anything
 * changes. An event stored already as it is (the same write made again) is not refused: it is
 * returned, to be kept once.
 */
export function repeatedEvents(
  events: readonly CallEvent[],
  storedOf: (callId: string) => readonly CallEvent[] | undefined,
): Set<CallEvent> | undefined {
  const last = new Map<string, number>();
  let repeated: Set<CallEvent> | undefined;
  for (const event of events) {
    const stored = storedOf(event.callId);
    const previous = last.get(event.callId) ?? stored?.at(-1)?.seq ?? 0;
    if (event.seq <= previous) {
      const same = !last.has(event.callId) && stored?.find((candidate) => candidate.seq === event.seq);
      if (!same || JSON.stringify(same) !== JSON.stringify(event)) {
        throw new Error(`event ${event.seq} of call ${event.callId} is already stored`);
      }
      repeated ??= new Set();
      repeated.add(event);
      continue;
    }
    last.set(event.callId, event.seq);
  }
  return repeated;
}
