import { replyText, toJsonSchema } from '@baton/contracts';
import type { Runtime } from '@baton/runtime';
import { bridgeCall } from '@baton/runtime/bridge';
import { llm } from '@livekit/agents';
import type { JSONSchema7 } from 'json-schema';

export interface BatonLiveKitToolsOptions {
  /** The Baton session of the voice session: its calls are in it, and their results come back to it. */
  sessionId: string;
}

/** A Baton tool as a LiveKit `Agent` holds it: its arguments are the contract's, checked by Baton. */
export type BatonLiveKitTool = llm.AnonFunctionTool;

/** One Baton tool as a LiveKit function tool (see `batonLiveKitTools`). */
function batonLiveKitTool(
  runtime: Runtime,
  name: string,
  description: string,
  parameters: JSONSchema7,
  sessionId: string,
): BatonLiveKitTool {
  return llm.tool({
    description,
    // Baton validates the arguments itself, against the same contract.
    parameters,
    execute: async (args, { toolCallId, abortSignal }) => {
      const reply = await bridgeCall(runtime, {
        name,
        args,
        sessionId,
        callId: toolCallId,
        signal: abortSignal,
      });
      return replyText(reply).text;
    },
  });
}

/**
 * A runtime's tools for a LiveKit `Agent` (`new voice.Agent({ tools })`). Each call of the model
 * runs as a Baton call, with the model's call id as its id and the speech's abort signal (the
 * user's interruption) as its cancellation. Within the inline budget the model gets the result;
 * past it, the acknowledgement at once, so the agent keeps talking, and the call goes on in the
 * background, its end put into the session by `batonLiveKitResults`.
 */
export function batonLiveKitTools(
  runtime: Runtime,
  { sessionId }: BatonLiveKitToolsOptions,
): Record<string, BatonLiveKitTool> {
  return Object.fromEntries(
    runtime.tools
      .definitions()
      .map((definition) => [
        definition.name,
        batonLiveKitTool(
          runtime,
          definition.name,
          definition.description,
          toJsonSchema(definition.input) as JSONSchema7,
          sessionId,
        ),
      ]),
  );
}
