import type { Runtime } from '@baton/runtime';
import type { ModelMessage } from 'ai';

/** A denial without a reason still tells the Baton call why it did not run. */
export const DENIED_REASON = 'denied in the AI SDK approval flow';

/**
 * Gives the Baton calls the answers of the conversation's `tool-approval-response` parts: an
 * approval approves the call, a denial rejects it with its reason. Call it on the messages you
 * pass to the next `generateText`: the AI SDK runs nothing of a denied tool, so only this reaches
 * the Baton call of a denied one. An answer given before is not given again.
 */
export async function batonApprovalResponses(
  runtime: Runtime,
  messages: readonly ModelMessage[],
): Promise<void> {
  const callOfApproval = new Map<string, string>();
  for (const message of messages) {
    if (message.role !== 'assistant' || typeof message.content === 'string') continue;
    for (const part of message.content)
      if (part.type === 'tool-approval-request') callOfApproval.set(part.approvalId, part.toolCallId);
  }
  for (const message of messages) {
    if (message.role !== 'tool') continue;
    for (const part of message.content) {
      if (part.type !== 'tool-approval-response') continue;
      const callId = callOfApproval.get(part.approvalId);
      if (callId === undefined || (await runtime.get(callId))?.approval !== 'pending') continue;
      if (part.approved) await runtime.inputs.approve(callId);
      else await runtime.inputs.reject(callId, part.reason ?? DENIED_REASON);
    }
  }
}
