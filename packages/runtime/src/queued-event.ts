import type { CallEvent, CallRecord } from '@baton/contracts';
import type { WriteBatcher } from './write-batcher.js';

/**
 * The `queued` event of a call that a client stored for the workers, made from its record alone.
 * The client stores no event of a call it waits for: its write is the record and its place in the
 * queue, with no event row and no lock on the session's events. The worker that claims the call
 * stores this event, the first of the call's, with its own; a follower that reads the call before
 * then is shown the same event from the record (see Following).
 */
export function queuedEventOf(record: CallRecord): CallEvent {
  const { callId, sessionId, toolName, mode, createdAt } = record;
  return { type: 'queued', mode, to: 'queued', callId, sessionId, toolName, seq: 1, at: createdAt };
}

/**
 * The number of a claimed call's last stored event, for the events that follow. A call with none
 * stored yet has its `queued` event stored first, with them (number 1).
 */
export function afterQueuedEvent(
  writer: Pick<WriteBatcher, 'add'>,
  record: CallRecord,
  lastSeq: number,
): number {
  if (lastSeq > 0) return lastSeq;
  writer.add('events', queuedEventOf(record));
  return 1;
}
