import type { CallEvent, CallStatus } from '@baton/contracts';

/**
 * The states a call went through, in order, read from its events: each state event says which
 * transition of the machine it reports (`from` -> `to`). Events stored before they did are read
 * by their type: `started` means `inline` unless the call was already backgrounded.
 */
export function pathOf(events: readonly CallEvent[]): CallStatus[] {
  const path: CallStatus[] = [];
  const enter = (state: CallStatus) => {
    if (path.at(-1) !== state) path.push(state);
  };
  for (const event of events) {
    if ('to' in event && event.to !== undefined) {
      if (event.from !== undefined) enter(event.from);
      enter(event.to);
      continue;
    }
    switch (event.type) {
      case 'queued':
        enter('queued');
        break;
      case 'started':
        if (path.at(-1) !== 'backgrounded') enter('inline');
        break;
      case 'backgrounded':
      case 'succeeded':
      case 'failed':
      case 'cancelled':
      case 'timed_out':
        enter(event.type);
        break;
      default:
        break;
    }
  }
  return path;
}

/** The transitions a path took, as `from->to`. */
export function edgesOf(path: readonly CallStatus[]): Set<string> {
  return new Set(path.slice(1).map((state, i) => `${path[i]}->${state}`));
}
