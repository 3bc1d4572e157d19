import { type CallReply, taskSupportOf, toJsonSchema } from '@baton/contracts';
import type { Runtime } from '@baton/runtime';
import { bridgeCall, callAskingApproval, runApproved } from '@baton/runtime/bridge';
import { dynamicTool, jsonSchema, type ToolSet } from 'ai';
import { modelOutputOf } from './model-output.js';

export interface BatonToolsOptions {
  /** The Baton session of the conversation: its background results come back to it. */
  sessionId: string;
}

/**
 * A runtime's tools as an AI SDK `ToolSet`. Each call goes through `runtime.call`: validated,
 * admitted, recorded, and moved to the background past its inline budget, when the model is told
 * so at once. The AI SDK's tool-call id is the call's id, so a retried step is the same call; the
 * step's abort signal cancels a call that has not answered yet.
 *
 * A tool that needs approval uses the AI SDK's approval flow: the step ends with a
 * `tool-approval-request`, and the Baton call waits, recorded, for its approval. Pass the
 * conversation through `batonApprovalResponses` before the next `generateText`, so that the
 * `tool-approval-response` reaches the Baton call whichever way it went.
 */
export function batonTools(runtime: Runtime, { sessionId }: BatonToolsOptions): ToolSet {
  const tools: ToolSet = {};
  for (const definition of runtime.tools.definitions()) {
    const name = definition.name;
    const asksApproval = definition.execution.needsApproval !== undefined;
    const promotable = taskSupportOf(definition, { defaultMode: runtime.defaultMode }) !== 'forbidden';
    tools[name] = dynamicTool({
      description: definition.description,
      // OpenAI's async tool calling (the OpenAI provider's Responses models): the model goes on
      // without waiting for a call that may go to the background.
      ...(promotable ? { providerOptions: { openai: { async: true } } } : {}),
      // Baton validates the arguments itself, against the same contract.
      inputSchema: jsonSchema(toJsonSchema(definition.input) as never),
      ...(asksApproval
        ? {
            needsApproval: (args: unknown, { toolCallId }: { toolCallId: string }) =>
              callAskingApproval(runtime, { name, args, sessionId, callId: toolCallId }),
          }
        : {}),
      execute: (args, { toolCallId, abortSignal }) => {
        if (asksApproval)
          return runApproved(runtime, { name, args, sessionId, callId: toolCallId }, abortSignal);
        return bridgeCall(runtime, { name, args, sessionId, callId: toolCallId, signal: abortSignal });
      },
      toModelOutput: ({ output }) => modelOutputOf(output as CallReply),
    });
  }
  return tools;
}
