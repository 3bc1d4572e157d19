import type { CallEvent } from '@baton/contracts';
import { firstValueFrom, type Observable } from 'rxjs';
import type { Failures } from '../log.js';
import { CANCELLED_BY_SIGNAL } from '../messages.js';
import type { CallAbortChoice } from '../options.js';
import type { CallDriver } from './driver.js';
import type { CallRegistry } from './registry.js';

export interface CallerSignalDeps {
  registry: Pick<CallRegistry, 'get'>;
  driver: Pick<CallDriver, 'send'>;
  cancel(callId: string, reason: string): Promise<boolean>;
  follow(callId: string): Observable<CallEvent>;
  failures: Failures;
  /** The runtime hands its calls over: a connection that closes then is not a caller who gave up. */
  stopping(): boolean;
}

/**
 * A caller's signal, for as long as it waits for its call's reply: its abort cancels the call, or,
 * as `onAbort` decides from the abort's reason, hands it to the background as its inline budget
 * would (a call whose mode does not allow that is cancelled). Returns what stops listening.
 */
export function listenToCaller(
  deps: CallerSignalDeps,
  callId: string,
  signal: AbortSignal,
  onAbort: CallAbortChoice | ((reason: unknown) => CallAbortChoice) = 'cancel',
  answered: () => boolean,
): () => void {
  const cancel = async () => {
    if (await deps.cancel(callId, CANCELLED_BY_SIGNAL)) return;
    if (answered()) return;
    // Intake has not made the call yet (it checks, prepares, asks the store): cancel it as soon
    // as it exists. Its first event says it does; a runtime that closes first ends it anyway.
    await firstValueFrom(deps.follow(callId)).then(
      () => deps.cancel(callId, CANCELLED_BY_SIGNAL),
      () => false,
    );
  };
  const toBackground = async () => {
    // A call not made yet is handed over once it exists (its first event says so).
    if (!deps.registry.get(callId) && !answered()) {
      await firstValueFrom(deps.follow(callId)).catch(() => undefined);
    }
    if (!handedOver(deps, callId)) await cancel();
  };
  const abort = () => {
    // Once the drain is over, the caller is being answered that its call goes on: a connection
    // that closes then (its server stopping) is not a caller who cancelled.
    if (deps.stopping()) return;
    const choice = typeof onAbort === 'function' ? onAbort(signal.reason) : onAbort;
    const done = choice === 'background' ? toBackground() : cancel();
    done.catch(deps.failures.on('cancel on abort', callId));
  };
  if (signal.aborted) abort();
  else signal.addEventListener('abort', abort, { once: true });
  return () => signal.removeEventListener('abort', abort);
}

/**
 * Hands a call its caller gave up on to the background now, as its budget would: true when it
 * goes on. One another process runs goes on there, by its budget. A call whose mode keeps it
 * inline stays so: false, and it is cancelled.
 */
function handedOver(deps: Pick<CallerSignalDeps, 'registry' | 'driver'>, callId: string): boolean {
  const call = deps.registry.get(callId);
  if (!call || call.state.detached) return true;
  deps.driver.send(call, { type: 'BUDGET' });
  return call.state.detached;
}
