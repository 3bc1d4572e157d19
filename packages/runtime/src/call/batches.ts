import type { CallRecord } from '@baton/contracts';
import { batchFailedReason } from '../messages.js';
import type { Send } from './driver.js';
import type { CallBatch } from './live-call.js';

/**
 * The batch rules: a batch that stops at its first failure cancels its calls that have not started. A
 * call that failed (or was refused) calls this before its slot can go to one of them.
 */
export function failBatch(
  batch: CallBatch | undefined,
  failed: Pick<CallRecord, 'callId' | 'toolName'>,
  send: Send,
): void {
  if (!batch || batch.continueOnFailure || batch.failure) return;
  batch.failure = batchFailedReason(failed.callId, failed.toolName);
  for (const call of batch.calls) {
    if (call.record.status === 'queued') send(call, { type: 'CANCEL', reason: batch.failure });
  }
}
