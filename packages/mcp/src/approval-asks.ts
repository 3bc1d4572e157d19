import { type CallRecord, withSecretArgsRedacted } from '@baton/contracts';
import type { ServerContext } from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { Serving } from './serving.js';
import { APPROVAL_INPUT_KEY, approvalRequestOf } from './task-view.js';

/** A client's answer to an elicitation. */
export const ElicitResult = z.object({
  action: z.enum(['accept', 'decline', 'cancel']),
  content: z.record(z.string(), z.unknown()).optional(),
});

/** The calls whose approval is being asked of a client now: one ask at a time for each. */
const asking = new Set<string>();

/**
 * 2025-11-25: a call's approval, asked of the client as an elicitation on the request in hand
 * (a task's tasks/result or tasks/get, a plain tools/call): accept approves, anything else rejects.
 */
export async function askApproval(
  serving: Serving,
  record: CallRecord,
  context: ServerContext,
  meta: Record<string, unknown>,
): Promise<void> {
  // Asked already on another request (an earlier poll): that one gets the answer.
  if (asking.has(record.callId)) return;
  asking.add(record.callId);
  const request = approvalRequestOf(withSecretArgsRedacted(serving.runtime.tools, record))[
    APPROVAL_INPUT_KEY
  ];
  try {
    const answer = ElicitResult.parse(
      await context.mcpReq.send({
        method: 'elicitation/create',
        params: { ...request.params, _meta: meta },
      }),
    );
    await answerApproval(serving, record, answer);
  } catch {
    // Not answered (a client without elicitation, or one that went away): the call goes on
    // waiting for its approval, from the API or from the next tasks/result.
  } finally {
    asking.delete(record.callId);
  }
}

/** An elicitation's answer to an approval: accept approves; decline or cancel rejects, with the reason given. */
export async function answerApproval(
  serving: Serving,
  record: CallRecord,
  answer: z.infer<typeof ElicitResult>,
) {
  if (answer.action === 'accept') {
    await serving.runtime.inputs.approve(record.callId);
    return;
  }
  const reason = answer.content?.reason;
  await serving.runtime.inputs.reject(
    record.callId,
    typeof reason === 'string' && reason !== '' ? reason : `the user chose to ${answer.action}`,
  );
}
