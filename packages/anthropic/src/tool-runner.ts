import type Anthropic from '@anthropic-ai/sdk';
import type { BetaRunnableTool } from '@anthropic-ai/sdk/lib/tools/BetaRunnableTool';
import { ToolError } from '@anthropic-ai/sdk/lib/tools/ToolError';
import { replyText, toJsonSchema } from '@baton/contracts';
import type { Runtime } from '@baton/runtime';
import { bridgeCall } from '@baton/runtime/bridge';

export interface BatonRunnableToolsOptions {
  /** The Baton session of the conversation: its background results come back to it. */
  sessionId: string;
}

/**
 * A runtime's tools for the SDK's tool runner (`client.beta.messages.toolRunner`). Each run is a
 * Baton call with the `tool_use` id as its id and the runner's signal as its cancellation; a failed
 * call becomes an `is_error` result with its message.
 */
export function batonRunnableTools(
  runtime: Runtime,
  { sessionId }: BatonRunnableToolsOptions,
): BetaRunnableTool<unknown>[] {
  return runtime.tools.definitions().map((tool) => ({
    name: tool.name,
    description: tool.description,
    input_schema: toJsonSchema(tool.input) as Anthropic.Beta.BetaTool['input_schema'],
    // Baton validates the arguments itself, against the same contract.
    parse: (input: unknown) => input,
    run: async (args, context) => {
      const reply = await bridgeCall(runtime, {
        name: tool.name,
        args,
        sessionId,
        callId: context?.toolUse.id,
        signal: context?.signal ?? undefined,
      });
      const { text, isError } = replyText(reply);
      if (isError) throw new ToolError(text);
      return text;
    },
  }));
}
