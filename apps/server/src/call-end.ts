import { endOf, type TerminalStatus } from '@baton/contracts';
import type { Runtime } from '@baton/runtime';
import { filter, first, map } from 'rxjs';

/**
 * Resolves when the call has ended (at once if it already has); rejects when `signal` aborts.
 * The same as `@baton/mcp`'s: it goes with this endpoint once the server mounts that package.
 */
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
