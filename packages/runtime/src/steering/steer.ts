import {
  BatonError,
  type CallRecord,
  type EventOutcome,
  isTerminalStatus,
  MAX_MESSAGES_PER_CALL,
  type SteerReceipt,
  type ToolRegistry,
} from '@baton/contracts';
import type { StoreCallFiles, StoreReads } from '@baton/store';
import type { CallContextHost } from '../call/context-host.js';
import { newId } from '../ids.js';
import { eventKey } from '../keys.js';
import { STEERING_MESSAGES } from '../messages.js';
import { describeIssues } from '../outcome.js';
import { storableValue } from '../storable.js';
import { isSentMessage, messageKey, type SentMessage } from './sent-message.js';

export interface SteerDeps {
  /** The call as this process knows it best: live here, or as stored. */
  runtime: { get(callId: string): Promise<CallRecord | undefined> };
  /** The call's live copy in this process, if it runs here (no read of the store). */
  live(callId: string): CallRecord | undefined;
  store: Pick<StoreCallFiles, 'getResolution'> & Pick<StoreReads, 'getCall'>;
  tools: Pick<ToolRegistry, 'get'>;
  /** Stores an external event's resolution and wakes the call's wait, in this process or another. */
  host: Pick<CallContextHost, 'resolveEvent'>;
  /** The numbers this process knows taken, per call (see `MessageNumbers`). */
  numbers?: MessageNumbers;
  /** Stores a resolution that no wait reads (a keyed message's first number), telling no one. */
  storeResolution(key: string, callId: string, outcome: EventOutcome): Promise<void>;
}

/** The longest idempotency key a message may carry. */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

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
 * sent after. With an `idempotencyKey`, a message sent again (a retry after an error, at any
 * process) is stored once and answered with the number it was stored under.
 */
export async function steerCall(
  deps: SteerDeps,
  callId: string,
  given: unknown,
  idempotencyKey?: string,
): Promise<SteerReceipt> {
  const { runtime, store, tools } = deps;
  if (
    idempotencyKey !== undefined &&
    (typeof idempotencyKey !== 'string' ||
      idempotencyKey.length === 0 ||
      idempotencyKey.length > MAX_IDEMPOTENCY_KEY_LENGTH)
  ) {
    throw new BatonError('invalid_arguments', STEERING_MESSAGES.badKey(MAX_IDEMPOTENCY_KEY_LENGTH));
  }
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
  // A keyed message is the same message from any process, under every try: its id is its key's.
  const sentId = idempotencyKey === undefined ? newId() : `key:${idempotencyKey}`;
  const sent: SentMessage = { sentId, message: storableValue(checked.value) };
  const numbers = deps.numbers;
  const firstUnread = (record.messagesRead ?? 0) + 1;
  let start = numbers ? numbers.from(callId, firstUnread) : firstUnread;
  if (idempotencyKey !== undefined) {
    const earliest = await firstTry(deps, callId, idempotencyKey, start);
    // Stored by an earlier try (read since, perhaps): the same number.
    const stored = await storedFrom(deps, callId, earliest, sent);
    if (stored !== undefined) return receiptOf(deps, callId, stored);
    start = Math.max(start, earliest);
  }
  for (let messageSeq = start; ; ) {
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
    return receiptOf(deps, callId, messageSeq);
  }
}

/**
 * The receipt of a message stored under `messageSeq`, unless its call ended without reading it.
 * Both copies are read: the one live here may have ended before its end is stored, and the stored
 * one may have been ended by another process while this one still holds a copy it has not yet
 * heard is stale (it was taken for gone in an outage). An end stored before the message was is
 * seen here, so no message is answered 202 after its call's end.
 */
async function receiptOf(deps: SteerDeps, callId: string, messageSeq: number): Promise<SteerReceipt> {
  const here = deps.live(callId);
  const stored = await deps.store.getCall(callId);
  for (const now of [here, stored]) {
    if (now && isTerminalStatus(now.status) && (now.messagesRead ?? 0) < messageSeq) refuseEnded(now);
  }
  return { callId, messageSeq };
}

/**
 * The number the first try of a keyed message began at, kept under its key (the first kept
 * stands): its message is there or after it (a number another sender took first is skipped).
 */
async function firstTry(deps: SteerDeps, callId: string, idempotencyKey: string, start: number) {
  const key = eventKey(callId, `sent:${idempotencyKey}`);
  let kept = await deps.store.getResolution(key);
  if (!kept) {
    await deps.storeResolution(key, callId, { value: { messageSeq: start } });
    kept = await deps.store.getResolution(key);
  }
  const value =
    kept && 'value' in kept.outcome ? (kept.outcome.value as { messageSeq?: unknown }) : undefined;
  return typeof value?.messageSeq === 'number' ? value.messageSeq : start;
}

/** The number of `sent` stored at `from` or after it, among the numbers taken in a row there. */
async function storedFrom(deps: SteerDeps, callId: string, from: number, sent: SentMessage) {
  for (let messageSeq = from; messageSeq <= MAX_MESSAGES_PER_CALL; messageSeq++) {
    const kept = await deps.store.getResolution(messageKey(callId, messageSeq));
    if (!kept) return undefined;
    if (isOurs(kept.outcome, sent)) return messageSeq;
  }
  return undefined;
}

function isOurs(outcome: EventOutcome, sent: SentMessage): boolean {
  return 'value' in outcome && isSentMessage(outcome.value) && outcome.value.sentId === sent.sentId;
}

function refuseEnded(record: CallRecord): void {
  if (!isTerminalStatus(record.status)) return;
  throw new BatonError('call_ended', STEERING_MESSAGES.ended(record.callId, record.status));
}
