import type { CallEvent } from '@baton/contracts';
import type { Observable } from 'rxjs';
import type { Send } from './call/driver.js';
import type { LiveCall } from './call/live-call.js';
import type { CallRegistry } from './call/registry.js';
import type { Clock } from './clock.js';
import { INTERRUPTED, type Recovery } from './recovery/recover.js';

export interface ShutdownDeps {
  registry: Pick<CallRegistry, 'all' | 'size'>;
  send: Send;
  recovery: Pick<Recovery, 'drop'>;
  clock: Clock;
  /** Every stored event: an end is a sign that the drain may be over. */
  events$: Observable<CallEvent>;
}

/**
 * Resolves once no call that `mustEnd` is live here, or once `drainMs` has passed on the runtime's
 * clock (every live call must end, by default).
 */
export function drained(
  { registry, clock, events$ }: ShutdownDeps,
  drainMs: number,
  mustEnd: (call: LiveCall) => boolean = () => true,
): Promise<void> {
  const over = () => !registry.all().some(mustEnd);
  if (registry.size === 0 || drainMs <= 0 || over()) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clock.clearTimeout(timer);
      watching.unsubscribe();
      resolve();
    };
    const timer = clock.setTimeout(done, drainMs);
    const watching = events$.subscribe(() => {
      if (registry.size === 0 || over()) done();
    });
  });
}

/**
 * What a drain must wait for when the process that stops is the only one on its store (SQLite),
 * so that it refuses new calls no longer than it must: a call whose caller waits for its end, or
 * one that may not run again. An idempotent call in the background loses nothing handed over:
 * the next start runs it again, from its durable steps.
 */
export function mustEndBeforeHandover(call: LiveCall): boolean {
  return !call.record.detached || !call.tool.execution.idempotent;
}

/**
 * The calls still live when a runtime stops. On a store that outlives the process they are handed
 * over: a caller still waiting hears that the call goes on in the background (so its end becomes
 * a notification), and the call is left to another process or the next start, which take it up
 * under the recovery rules (an idempotent call runs again, from its durable steps; another ends
 * `interrupted`). Nothing can take them up from a store kept in memory: they end `interrupted`.
 * Never `cancelled`: nobody cancelled them. Returns how many were handed over.
 */
export function handOver({ registry, send, recovery }: ShutdownDeps, outlivesProcess: boolean): number {
  const calls = registry.all();
  for (const call of calls) {
    if (outlivesProcess) {
      send(call, { type: 'HANDOVER' });
      recovery.drop(call);
    } else {
      send(call, { type: 'FAIL', outcome: INTERRUPTED });
    }
  }
  return outlivesProcess ? calls.length : 0;
}
