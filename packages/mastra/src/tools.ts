import { type AnyTool, type CallReply, toJsonSchema, toToolOutputForModel } from '@baton/contracts';
import type { Runtime } from '@baton/runtime';
import {
  type ApprovalDecision,
  approvalRequestOf,
  bridgeCall,
  callAwaitingApproval,
  replyOf,
  runDecided,
} from '@baton/runtime/bridge';
import { createTool, type ToolExecutionContext } from '@mastra/core/tools';
import type { JSONSchema7 } from 'json-schema';

export interface BatonMastraToolsOptions {
  /** The Baton session of the conversation: its background results come back to it. */
  sessionId: string;
}

/**
 * A call that waits for its approval, through the tool's suspend and resume: the Baton call is made
 * and recorded, waiting, and the run suspends with an `ApprovalRequest`; resumed with the
 * user's decision (the same tool call, so the same Baton call), it approves or rejects the call
 * and answers with its reply. Undefined while suspended.
 */
async function approvedReply(
  runtime: Runtime,
  request: { name: string; args: unknown; sessionId: string; callId: string },
  context: ToolExecutionContext,
): Promise<CallReply | undefined> {
  const decision = context.agent?.resumeData as ApprovalDecision | undefined;
  const signal = context.abortSignal;
  if (decision !== undefined) return runDecided(runtime, request, decision, signal);
  const suspend = context.agent?.suspend;
  if (!(await callAwaitingApproval(runtime, request)) || suspend === undefined) {
    return replyOf(runtime, request, signal);
  }
  await suspend(approvalRequestOf(request));
  return undefined;
}

/** One Baton tool as a Mastra tool (see `batonMastraTools`). */
function batonMastraTool(runtime: Runtime, definition: AnyTool, sessionId: string) {
  const name = definition.name;
  const asksApproval = definition.execution.needsApproval !== undefined;
  return createTool({
    id: name,
    description: definition.description,
    // Baton validates the arguments itself, against the same contract.
    inputSchema: toJsonSchema(definition.input) as JSONSchema7,
    execute: async (args: unknown, context: ToolExecutionContext) => {
      const callId = context.agent?.toolCallId;
      if (asksApproval && callId !== undefined)
        return approvedReply(runtime, { name, args, sessionId, callId }, context);
      return bridgeCall(runtime, { name, args, sessionId, callId, signal: context.abortSignal });
    },
    toModelOutput: (reply: unknown) => toToolOutputForModel(reply as CallReply),
  });
}

/** A Baton tool as Mastra takes it. */
export type BatonMastraTool = ReturnType<typeof batonMastraTool>;

/**
 * A runtime's tools as Mastra tools, for an `Agent`'s `tools`. Each call goes through
 * `runtime.call` with the model's tool call id as its id and the run's abort signal as its
 * cancellation: validated (Baton checks the arguments against the same contract), admitted,
 * recorded, and moved to the background past its inline budget, when the model is given the
 * acknowledgement at once. A failure is shown to the model as the error's text.
 *
 * A tool that needs approval suspends the run (Mastra keeps its snapshot in the Mastra instance's
 * storage) with an `ApprovalRequest`; resume with `agent.resumeGenerate({ approved }, { runId, toolCallId })`.
 */
export function batonMastraTools(
  runtime: Runtime,
  { sessionId }: BatonMastraToolsOptions,
): Record<string, BatonMastraTool> {
  return Object.fromEntries(
    runtime.tools
      .definitions()
      .map((definition) => [definition.name, batonMastraTool(runtime, definition, sessionId)]),
  );
}
