import { isTerminalStatus } from '@baton/contracts';
import type { Store } from '@baton/store';
import type { CallRegistry } from '../call/registry.js';
import type { Failures } from '../log.js';

/**
 * On a store that processes share: a resolution stored here (a message, an answer to an input) for
 * a call another process runs is told to that process as a `resolved` request, so that its wait
 * reads it now. A call no one runs yet reads it when it waits, from the store. A request that
 * cannot be sent is reported, not thrown: the resolution is stored, and the sender must not send
 * it again.
 */
export function tellingOwner(
  store: Pick<Store, 'getCall' | 'send'>,
  registry: Pick<CallRegistry, 'has'>,
  failures: Failures,
): (callId: string, key: string) => Promise<void> {
  return async (callId, key) => {
    if (registry.has(callId) || !store.send) return;
    try {
      const record = await store.getCall(callId);
      if (!record?.ownerId || isTerminalStatus(record.status)) return;
      await store.send({ type: 'control', callId, action: 'resolved', key });
    } catch (error) {
      failures.report('tell the owner of a resolution', error, callId);
    }
  };
}
