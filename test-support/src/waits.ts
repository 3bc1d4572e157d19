import type { Runtime } from '@baton/runtime';
import { filter, firstValueFrom } from 'rxjs';

/** Resolves once the call has started, then moves the runtime's simulated clock past the inline budget. */
export function promoteWhenStarted(
  { runtime, clock }: { runtime: Pick<Runtime, 'events$'>; clock: { increment(ms: number): void } },
  callId: string,
  budgetMs: number,
): Promise<void> {
  return firstValueFrom(
    runtime.events$.pipe(filter((event) => event.type === 'started' && event.callId === callId)),
  ).then(() => clock.increment(budgetMs));
}

/** Looks at `check` until it holds (what another process or a socket does), at most `timeoutMs` of real time. */
export async function eventually(
  check: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 10_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Resolves with the id of the next call that starts (one whose id the test cannot know before). */
export function nextStart(runtime: Pick<Runtime, 'events$'>): Promise<string> {
  return firstValueFrom(runtime.events$.pipe(filter((event) => event.type === 'started'))).then(
    (event) => event.callId,
  );
}
