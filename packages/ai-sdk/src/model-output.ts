import { type CallReply, toToolOutputForModel } from '@baton/contracts';
import type { Tool } from 'ai';

/** What a tool's `toModelOutput` gives the model (the AI SDK does not export its name). */
export type ToolResultOutput = Awaited<ReturnType<NonNullable<Tool['toModelOutput']>>>;

/**
 * What the model is shown of a Baton reply (`toToolOutputForModel`, shared with the bridges on the
 * AI SDK's models): the result, the acknowledgement of a call gone to the background, or the
 * error's message.
 */
export function modelOutputOf(reply: CallReply): ToolResultOutput {
  return toToolOutputForModel(reply) as ToolResultOutput;
}
