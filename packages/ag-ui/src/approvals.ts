import type { Interrupt, ResumeEntry } from '@ag-ui/core';
import type { ApprovalDecision } from '@baton/runtime/bridge';

/** The reason of the interrupt a Baton approval finishes a run with. */
export const APPROVAL_REASON = 'tool_approval';

const PREFIX = 'baton-approval:';

/** What the front end answers an approval with: `resume: [{ interruptId, status: 'resolved', payload }]`. */
export interface ApprovalPayload {
  approved: boolean;
  /** Told to the model when it is rejected. */
  reason?: string;
}

/** The interrupt that asks for the approval of a call: answered by its id, which names the call. */
export function approvalInterrupt(call: { callId: string; toolCallId: string; tool: string }): Interrupt {
  return {
    id: `${PREFIX}${call.callId}`,
    reason: APPROVAL_REASON,
    message: `The tool ${call.tool} needs approval before it runs.`,
    toolCallId: call.toolCallId,
    responseSchema: {
      type: 'object',
      properties: { approved: { type: 'boolean' }, reason: { type: 'string' } },
      required: ['approved'],
    },
  };
}

/**
 * The decision a resume entry carries for a Baton approval, with the call it names; undefined for
 * an entry that answers another interrupt. An entry `cancelled`, or a payload that does not say
 * `approved: true`, rejects the call.
 */
export function decisionOf(entry: ResumeEntry): { callId: string; decision: ApprovalDecision } | undefined {
  if (!entry.interruptId.startsWith(PREFIX)) return undefined;
  const callId = entry.interruptId.slice(PREFIX.length);
  if (entry.status === 'cancelled')
    return { callId, decision: { approved: false, reason: 'the approval was cancelled' } };
  const payload = (entry.payload ?? {}) as Partial<ApprovalPayload>;
  if (payload.approved === true) return { callId, decision: { approved: true } };
  return {
    callId,
    decision: {
      approved: false,
      reason:
        typeof payload.reason === 'string' && payload.reason !== '' ? payload.reason : 'rejected by the user',
    },
  };
}
