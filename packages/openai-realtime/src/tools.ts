import { replyText, toOpenAIResponsesTool } from '@baton/contracts';
import type { Runtime } from '@baton/runtime';
import { bridgeCall } from '@baton/runtime/bridge';
import { type FunctionTool, type RealtimeContextData, tool } from '@openai/agents-realtime';

/** The SDK types a JSON Schema by its literal shape; the contract's schema is only known at run time. */
type DeclaredParameters = {
  type: 'object';
  properties: Record<string, never>;
  required: never[];
  additionalProperties: false;
};

/** A Baton tool as a `RealtimeAgent` holds it: its arguments are the contract's, checked by Baton. */
export type BatonRealtimeTool = FunctionTool<RealtimeContextData, DeclaredParameters, string>;

export interface BatonRealtimeToolsOptions {
  /** The Baton session of the voice session: its calls are in it, and their results come back to it. */
  sessionId: string;
}

/**
 * A runtime's tools for a `RealtimeAgent`. Each call of the model runs as a Baton call, with the
 * model's call id as its id and the SDK's signal (the session's interruption, the agent's
 * cancellation) as its cancellation. Within the inline budget the model gets the result; past it,
 * the acknowledgement at once (the voice goes on), and the call goes on in the background, its
 * end put into the conversation by `batonRealtimeResults`.
 */
export function batonRealtimeTools(
  runtime: Runtime,
  { sessionId }: BatonRealtimeToolsOptions,
): BatonRealtimeTool[] {
  return runtime.tools.definitions().map((definition) => {
    const declared = toOpenAIResponsesTool(definition);
    return tool<DeclaredParameters, RealtimeContextData>({
      name: definition.name,
      description: definition.description,
      ...({ parameters: declared.parameters, strict: declared.strict } as unknown as {
        parameters: DeclaredParameters;
        strict: true;
      }),
      execute: async (input, _context, details) => {
        const reply = await bridgeCall(runtime, {
          name: definition.name,
          args: input,
          sessionId,
          callId: details?.toolCall?.callId,
          signal: details?.signal,
        });
        return replyText(reply).text;
      },
    });
  });
}
