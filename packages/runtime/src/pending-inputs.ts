import { type CallEvent, isTerminalStatus } from '@baton/contracts';
import type { Store } from '@baton/store';
import type { PendingInput } from './options.js';

/**
 * `runtime.inputs.pending`: the call's input requests (its `input_requested` events, one per key:
 * an attempt after a retry asks under the same keys) that have no resolution, while it runs.
 */
export async function pendingInputs(store: Store, callId: string): Promise<PendingInput[]> {
  const record = await store.getCall(callId);
  if (!record || isTerminalStatus(record.status)) return [];
  const asked = new Map<string, PendingInput>();
  for (const event of await store.listEvents(callId)) {
    if (event.type !== 'input_requested') continue;
    const { key, name, request } = event as Extract<CallEvent, { type: 'input_requested' }>;
    asked.set(key, { key, name, request });
  }
  const resolutions = await Promise.all([...asked.keys()].map((key) => store.getResolution(key)));
  return [...asked.values()].filter((_input, index) => resolutions[index] === undefined);
}
