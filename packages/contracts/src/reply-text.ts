import type { CallReply } from './call.js';

/** A reply as a model's tool result reads it, for loops whose tool results are text. */
export interface ReplyText {
  text: string;
  /** The call failed, was cancelled or timed out: the loop marks the result as an error. */
  isError: boolean;
}

/**
 * What the model is told of a reply: the output (the runtime's acknowledgement when the call went
 * on in the background, the background continuation), as it is when it is text and as JSON otherwise; or the error's
 * message, which for an internal error is already the runtime's generic one (the background runs).
 */
export function replyText(reply: CallReply): ReplyText {
  if (reply.status === 'succeeded' || reply.status === 'backgrounded') {
    const text = typeof reply.output === 'string' ? reply.output : JSON.stringify(reply.output ?? null);
    return { text, isError: false };
  }
  return { text: reply.error?.message ?? `The tool call ended ${reply.status}.`, isError: true };
}
