import { type CallReply, replyText, toJsonSchema } from '@baton/contracts';
import type { Runtime } from '@baton/runtime';
import {
  type ApprovalDecision,
  type ApprovalRequest,
  approvalRequestOf,
  bridgeCall,
  callAwaitingApproval,
  replyOf,
  runDecided,
} from '@baton/runtime/bridge';
import { ToolMessage } from '@langchain/core/messages';
import type { ToolCall } from '@langchain/core/messages/tool';
import type { RunnableConfig } from '@langchain/core/runnables';
import { DynamicStructuredTool } from '@langchain/core/tools';
import type { JSONSchema } from '@langchain/core/utils/json_schema';
import { interrupt } from '@langchain/langgraph';

export interface BatonLangChainToolsOptions {
  /** The Baton session of the conversation: its background results come back to it. */
  sessionId: string;
}

/** A tool run by a graph is given the model's tool call; the call's id is the Baton call's. */
const toolCallOf = (config: RunnableConfig | undefined): ToolCall | undefined =>
  (config as { toolCall?: ToolCall } | undefined)?.toolCall;

/**
 * The answer as LangChain takes it: a `ToolMessage` for the model's tool call (a failure marked
 * `status: 'error'`, with its message), or the text alone for a tool invoked by hand.
 */
function answerOf(reply: CallReply, name: string, toolCall: ToolCall | undefined): string | ToolMessage {
  const { text, isError } = replyText(reply);
  if (toolCall?.id === undefined) return text;
  return new ToolMessage({
    content: text,
    tool_call_id: toolCall.id,
    name,
    status: isError ? 'error' : 'success',
  });
}

/**
 * A runtime's tools as LangChain tools, for `createAgent`, LangGraph's `ToolNode`, or
 * `model.bindTools`. Each call goes through `runtime.call` with the model's tool call id as its id
 * and the run's signal as its cancellation: validated (Baton checks the arguments against the same
 * contract), admitted, recorded, and moved to the background past its inline budget, when the
 * model is told so at once. A failure is a `ToolMessage` with `status: 'error'`.
 *
 * A tool that needs approval asks through `interrupt()` (the graph needs a checkpointer): the Baton
 * call is made and waits, recorded, for its approval; resume with `new Command({ resume: { approved } })`.
 */
export function batonLangChainTools(
  runtime: Runtime,
  { sessionId }: BatonLangChainToolsOptions,
): DynamicStructuredTool[] {
  return runtime.tools.definitions().map((definition) => {
    const name = definition.name;
    const asksApproval = definition.execution.needsApproval !== undefined;
    return new DynamicStructuredTool({
      name,
      description: definition.description,
      // Baton validates the arguments itself, against the same contract.
      schema: toJsonSchema(definition.input) as JSONSchema,
      func: async (args: unknown, _runManager, config) => {
        const toolCall = toolCallOf(config);
        const signal = config?.signal;
        const callId = toolCall?.id;
        if (asksApproval && callId !== undefined) {
          const named = { name, args, sessionId, callId };
          if (!(await callAwaitingApproval(runtime, named))) {
            return answerOf(await replyOf(runtime, named, signal), name, toolCall);
          }
          // On resume the graph runs the tool again from its start: the Baton call is the same (its
          // id is the tool call's), and `interrupt()` returns the decision.
          const decision = interrupt<ApprovalRequest, ApprovalDecision | undefined>(approvalRequestOf(named));
          const decided = {
            approved: decision?.approved === true,
            reason: decision?.reason ?? 'rejected in the graph',
          };
          return answerOf(await runDecided(runtime, named, decided, signal), name, toolCall);
        }
        return answerOf(await bridgeCall(runtime, { name, args, sessionId, callId, signal }), name, toolCall);
      },
    });
  });
}
