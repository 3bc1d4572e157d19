import { type CallRecord, endOf } from '@baton/contracts';
import { filter, firstValueFrom, fromEvent, takeUntil } from 'rxjs';
import type { Runtime } from '../runtime-api.js';

/**
 * The call's end, once what follows it is stored too: the notification of a detached call (one
 * that tells its session), so that whoever was given the end can acknowledge it. Resolves at once
 * for one stored already; `stop` ends the waiting.
 */
export function endStored(
  runtime: Pick<Runtime, 'follow'>,
  record: Pick<CallRecord, 'callId' | 'detached' | 'run'>,
  stop: AbortSignal,
): Promise<unknown> {
  const notifies = record.detached && (!record.run || record.run.signalOnCompletion);
  return firstValueFrom(
    runtime.follow({ callId: record.callId }).pipe(
      filter((event) => (notifies ? event.type === 'notification' : endOf(event) !== undefined)),
      takeUntil(fromEvent(stop, 'abort')),
    ),
    { defaultValue: undefined },
  );
}

/**
 * The one rule of the ledger for a consumer that got a call's end by asking for it (a wait,
 * `wait_background`, an MCP task's result): it has what every notification of the call left
 * queued would give (the end, and the updates and reminders the end replaces), so each is
 * acknowledged, and no loop of its session gives it again. A call not ended is given nothing.
 * Resolves with how many were acknowledged.
 */
export async function acknowledgeGivenEnd(
  notifications: Pick<Runtime['notifications'], 'list' | 'ack'>,
  record: Pick<CallRecord, 'callId' | 'sessionId'>,
): Promise<number> {
  const queued = await notifications.list({ sessionId: record.sessionId, status: 'queued' });
  const ofCall = queued.filter((candidate) => candidate.callId === record.callId);
  const acknowledged = await Promise.all(ofCall.map((notification) => notifications.ack(notification.id)));
  return acknowledged.filter(Boolean).length;
}
