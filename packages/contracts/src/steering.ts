/** The most messages one call is sent (`runtime.steer`): a sender past it is refused (`limit_exceeded`). */
export const MAX_MESSAGES_PER_CALL = 1_000;

/** What a sender of a message to a running call is answered once it is stored: its number in the call, from 1. */
export interface SteerReceipt {
  callId: string;
  messageSeq: number;
}
