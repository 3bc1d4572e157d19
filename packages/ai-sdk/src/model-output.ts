import { type CallReply, replyText } from '@baton/contracts';
import type { Tool } from 'ai';

/** What a tool's `toModelOutput` gives the model (the AI SDK does not export its name). */
export type ToolResultOutput = Awaited<ReturnType<NonNullable<Tool['toModelOutput']>>>;

function jsonOrText(value: unknown): ToolResultOutput {
  return typeof value === 'string'
    ? { type: 'text', value }
    : { type: 'json', value: (value ?? null) as never };
}

/**
 * What the model is shown of a Baton reply: the result; the runtime's acknowledgement when the call
 * went on in the background (the background continuation's words); the error's message when it failed (a tool's own
 * error is shown as it said it, an internal error only as the runtime words it, the background runs).
 */
export function modelOutputOf(reply: CallReply): ToolResultOutput {
  switch (reply.status) {
    case 'succeeded':
    case 'backgrounded':
      return jsonOrText(reply.output);
    default:
      return { type: 'error-text', value: replyText(reply).text };
  }
}
