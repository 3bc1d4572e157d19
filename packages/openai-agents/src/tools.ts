import { type OpenAIResponsesTool, replyText, toOpenAIResponsesTool } from '@baton/contracts';
import type { Runtime } from '@baton/runtime';
import { argumentsOf, bridgeCall, callAskingApproval, runApproved } from '@baton/runtime/bridge';
import { type FunctionTool, tool } from '@openai/agents';

/** The SDK types a JSON Schema by its literal shape; the contract's schema is only known at run time. */
type DeclaredParameters = {
  type: 'object';
  properties: Record<string, never>;
  required: never[];
  additionalProperties: false;
};

/** A Baton tool as the Agents SDK holds it: its arguments are the contract's, checked by Baton. */
export type BatonAgentTool = FunctionTool<unknown, DeclaredParameters, string>;

/** The contract's schema, `strict` when it can be said that way (`toOpenAIResponsesTool`). */
const schemaOf = (declared: OpenAIResponsesTool) =>
  ({ parameters: declared.parameters, strict: declared.strict }) as unknown as {
    parameters: DeclaredParameters;
    strict: true;
  };

export interface BatonAgentToolsOptions {
  /** The Baton session of the conversation: its background results come back to it. */
  sessionId: string;
}

/**
 * A runtime's tools as Agents SDK function tools, `strict` where the contract's schema allows.
 * Each call goes through `runtime.call` with the model's call id as its id and the run's signal as
 * its cancellation: validated (Baton checks the arguments against the same contract), admitted,
 * recorded, and moved to the background past its inline budget, when the model is told so at once
 * (the background continuation). A failure is shown as its message.
 *
 * A tool that needs approval becomes an Agents interruption: the Baton call is made when the model
 * asks for it and waits, recorded, for its approval. Resuming the run after `state.approve(item)`
 * approves it; `batonApprovals(runtime).reject(state, item)` rejects both.
 */
export function batonAgentTools(runtime: Runtime, { sessionId }: BatonAgentToolsOptions): BatonAgentTool[] {
  return runtime.tools.definitions().map((definition) => {
    const name = definition.name;
    const asksApproval = definition.execution.needsApproval !== undefined;
    return tool<DeclaredParameters>({
      name,
      description: definition.description,
      ...schemaOf(toOpenAIResponsesTool(definition)),
      ...(asksApproval
        ? {
            needsApproval: async (_context, input, callId) =>
              callId === undefined ||
              callAskingApproval(runtime, { name, args: argumentsOf(input), sessionId, callId }),
          }
        : {}),
      execute: async (input, _context, details) => {
        const callId = details?.toolCall?.callId;
        const signal = details?.signal;
        const reply =
          asksApproval && callId !== undefined
            ? await runApproved(runtime, { name, args: argumentsOf(input), sessionId, callId }, signal)
            : await bridgeCall(runtime, { name, args: input, sessionId, callId, signal });
        return replyText(reply).text;
      },
    });
  });
}
