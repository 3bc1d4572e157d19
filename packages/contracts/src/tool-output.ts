import type { CallReply } from './call.js';
import { replyText } from './reply-text.js';

/**
 * A tool result as the AI SDK's `toModelOutput` gives it to a model (and frameworks built on the AI
 * SDK, Mastra among them): text, JSON, or an error's text.
 */
export type ToolOutputForModel =
  | { type: 'text'; value: string }
  | { type: 'json'; value: unknown }
  | { type: 'error-text'; value: string };

/**
 * What the model is shown of a Baton reply: the result; the runtime's acknowledgement when the call
 * went on in the background; the error's message when it failed (a tool's own error as it said it,
 * an internal error only as the runtime words it).
 */
export function toToolOutputForModel(reply: CallReply): ToolOutputForModel {
  switch (reply.status) {
    case 'succeeded':
    case 'backgrounded':
      return typeof reply.output === 'string'
        ? { type: 'text', value: reply.output }
        : { type: 'json', value: reply.output ?? null };
    default:
      return { type: 'error-text', value: replyText(reply).text };
  }
}
