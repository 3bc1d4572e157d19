import type { CallEvent, TerminalStatus } from '@baton/contracts';
import type { Runtime } from '@baton/runtime';
import { filter, first, map } from 'rxjs';

/** The final status an event announces, if it is the end of its call. */
export function endOf(event: CallEvent): TerminalStatus | undefined {
  switch (event.type) {
    case 'succeeded':
    case 'failed':
    case 'cancelled':
    case 'timed_out':
      return event.type;
    default:
      return undefined;
  }
}

/** Resolves when the call has ended (at once if it already has); rejects when `signal` aborts. */
export function ended(runtime: Runtime, callId: string, signal?: AbortSignal): Promise<TerminalStatus> {
  return new Promise((resolve, reject) => {
    const subscription = runtime
      .follow({ callId: callId })
      .pipe(
        map(endOf),
        filter((status) => status !== undefined),
        first(),
      )
      .subscribe({ next: resolve, error: reject });
    signal?.addEventListener('abort', () => {
      subscription.unsubscribe();
      reject(signal.reason);
    });
  });
}
