import { eventKey } from '../keys.js';

/**
 * A message as it is kept: the resolution of the external event `message:<n>` of its call (the
 * first resolution of a key stands, so each number is one sender's), with the sender's own id so
 * that it can tell whether the number it tried is its own.
 */
export interface SentMessage {
  sentId: string;
  message: unknown;
}

/** The key of the `messageSeq`-th message sent to a call, from 1. */
export function messageKey(callId: string, messageSeq: number): string {
  return eventKey(callId, `message:${messageSeq}`);
}

export function isSentMessage(value: unknown): value is SentMessage {
  return typeof value === 'object' && value !== null && typeof (value as SentMessage).sentId === 'string';
}
