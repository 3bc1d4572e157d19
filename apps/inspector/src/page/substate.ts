import type { CallEvent, CallRecord } from '@baton/contracts';

/**
 * The state inside its top-level state that a call is in, as the machine names it: a queued call
 * waits for a slot or for approval; a running one runs, or waits to try again after a failure.
 */
export function substateOf(record: CallRecord, events: readonly CallEvent[]): string | undefined {
  if (record.status === 'queued') return record.approval === 'pending' ? 'awaiting_approval' : 'waiting';
  if (record.status !== 'inline' && record.status !== 'backgrounded') return undefined;
  const lastAttempt = events.findLast((event) => event.type === 'retrying' || event.type === 'started');
  return lastAttempt?.type === 'retrying' ? 'retry_wait' : 'running';
}
