import {
  BatonError,
  type CallRecord,
  type EventOutcome,
  isTerminalStatus,
  MAX_MESSAGES_PER_CALL,
  type SteerReceipt,
  type ToolRegistry,
} from '@baton/contracts';
import type { StoreCallFiles } from '@baton/store';
import type { CallContextHost } from '../call/context-host.js';
import { newId } from '../ids.js';
import { STEERING_MESSAGES } from '../messages.js';
import { describeIssues } from '../outcome.js';
import { storableValue } from '../storable.js';
import { isSentMessage, messageKey, type SentMessage } from './sent-message.js';

export interface SteerDeps {
  /** The call as this process knows it best: live here, or as stored. */
  runtime: { get(callId: string): Promise<CallRecord | undefined> };
  store: Pick<StoreCallFiles, 'getResolution'>;
  tools: Pick<ToolRegistry, 'get'>;
  /** Stores an external event's resolution and wakes the call's wait, in this process or another. */
  host: Pick<CallContextHost, 'resolveEvent'>;
  /** The numbers this process knows taken, per call (see `MessageNumbers`). */
  numbers?: MessageNumbers;
}

/** How many calls' next message numbers a process keeps in mind; past it, the least recent go. */
const NUMBERS_KEPT = 10_000;

/**
 * The next number a message to a call may have, as far as this process knows: the one after the
 * last it stored. A sender starts there rather than at the first unread message, so storing a
 * message costs the same reads however many wait unread; one another process stored meanwhile is
 * found taken, and the next is tried, as before.
 */
export class MessageNumbers {
  readonly #next = new Map<string, number>();

  from(callId: string, firstUnread: number): number {
    return Math.max(firstUnread, this.#next.get(callId) ?? 0);
  }

  taken(callId: string, messageSeq: number): void {
    this.#next.delete(callId);
    this.#next.set(callId, messageSeq + 1);
    const oldest = this.#next.keys().next().value;
    if (this.#next.size > NUMBERS_KEPT && oldest !== undefined) this.#next.delete(oldest);
  }
}

/**
 * `runtime.steer`: checks the message against its tool's `messages` schema and stores it under the
 * next free number of its call. The first resolution of a key stands, so two senders at once that
 * try the same number are told apart by the id each kept with its message: the one that lost tries
 * the next. The call may end meanwhile; a message it did not read by its end is refused as if
 * sent after.
 */
export async function steerCall(deps: SteerDeps, callId: string, given: unknown): Promise<SteerReceipt> {
  const { runtime, store, tools } = deps;
  const record = await runtime.get(callId);
  if (!record) throw new BatonError('call_not_found', STEERING_MESSAGES.notFound(callId));
  refuseEnded(record);
  const validate = tools.get(record.toolName)?.validateMessage;
  if (!validate) throw new BatonError('not_steerable', STEERING_MESSAGES.notSteerable(record.toolName));
  const checked = await validate(given);
  if (!checked.ok) {
    throw new BatonError(
      'invalid_arguments',
      STEERING_MESSAGES.invalid(record.toolName, describeIssues(checked.issues)),
    );
  }
  const sent: SentMessage = { sentId: newId(), message: storableValue(checked.value) };
  const numbers = deps.numbers;
  const firstUnread = (record.messagesRead ?? 0) + 1;
  for (let messageSeq = numbers ? numbers.from(callId, firstUnread) : firstUnread; ; ) {
    if (messageSeq > MAX_MESSAGES_PER_CALL) {
      throw new BatonError('limit_exceeded', STEERING_MESSAGES.tooMany(callId, MAX_MESSAGES_PER_CALL));
    }
    const key = messageKey(callId, messageSeq);
    let kept = await store.getResolution(key);
    if (!kept) {
      await deps.host.resolveEvent(key, { value: sent });
      kept = await store.getResolution(key);
    }
    // Not found even now: tried again under the same number, which no one has yet.
    if (!kept) continue;
    numbers?.taken(callId, messageSeq);
    if (!isOurs(kept.outcome, sent)) {
      messageSeq++;
      continue;
    }
    const now = await runtime.get(callId);
    if (now && isTerminalStatus(now.status) && (now.messagesRead ?? 0) < messageSeq) refuseEnded(now);
    return { callId, messageSeq };
  }
}

function isOurs(outcome: EventOutcome, sent: SentMessage): boolean {
  return 'value' in outcome && isSentMessage(outcome.value) && outcome.value.sentId === sent.sentId;
}

function refuseEnded(record: CallRecord): void {
  if (!isTerminalStatus(record.status)) return;
  throw new BatonError('call_ended', STEERING_MESSAGES.ended(record.callId, record.status));
}
