import {
  type AnyTool,
  type GeminiFunctionResult,
  taskSupportOf,
  toGeminiFunctionDeclaration,
  toGeminiResponse,
} from '@baton/contracts';
import type { Runtime } from '@baton/runtime';
import { bridgeCall, callAwaitingApproval, replyOf, runDecided } from '@baton/runtime/bridge';
import { BaseTool, type Context, type RunAsyncToolRequest } from '@google/adk';

export interface BatonAdkToolsOptions {
  /**
   * The Baton session of the calls, where their background results come back: by default the ADK
   * session's id, which `batonAdkResults` then reads.
   */
  sessionId?: string;
}

/** What the model is told of a call waiting for the user's confirmation (ADK's own words for it). */
export const CONFIRMATION_PENDING = 'This tool call requires confirmation, please approve or reject.';

/** The payload of the confirmation a Baton tool asks for: the Baton call that waits for it. */
export interface BatonConfirmationPayload {
  callId: string;
}

/**
 * A Baton tool as an ADK tool. One that may answer before it ends (an `auto` or `background`
 * tool, or one that waits for an approval) is long-running: ADK tells the model not to call it
 * again while it runs, and its later result is the function response of the same call.
 */
class BatonAdkTool extends BaseTool {
  readonly #runtime: Runtime;
  readonly #definition: AnyTool;
  readonly #sessionId: string | undefined;

  constructor(runtime: Runtime, definition: AnyTool, sessionId: string | undefined) {
    super({
      name: definition.name,
      description: definition.description,
      isLongRunning: taskSupportOf(definition, { defaultMode: runtime.defaultMode }) !== 'forbidden',
    });
    this.#runtime = runtime;
    this.#definition = definition;
    this.#sessionId = sessionId;
  }

  override _getDeclaration() {
    // Without `behavior`: that is the Live API's, and the runner calls `generateContent`.
    const { name, description, parametersJsonSchema } = toGeminiFunctionDeclaration(this.#definition);
    return { name, description, parametersJsonSchema };
  }

  override async checkRequireConfirmation(): Promise<boolean> {
    return this.#definition.execution.needsApproval !== undefined;
  }

  /**
   * The call through `runtime.call`, the model's function call id as its id and the run's signal as
   * its cancellation: answered with its output within the inline budget, or with the acknowledgement
   * once it goes to the background.
   */
  override async runAsync({ args, toolContext }: RunAsyncToolRequest): Promise<GeminiFunctionResult> {
    const callId = toolContext.functionCallId;
    const signal = toolContext.abortSignal;
    const sessionId = this.#sessionId ?? toolContext.sessionId;
    if (callId !== undefined && (await this.checkRequireConfirmation())) {
      const reply = await this.#confirmed(toolContext, { name: this.name, args, sessionId, callId }, signal);
      return reply ?? { error: CONFIRMATION_PENDING };
    }
    return toGeminiResponse(
      await bridgeCall(this.#runtime, { name: this.name, args, sessionId, callId, signal }),
    );
  }

  /**
   * A call that waits for its approval, through ADK's tool confirmation: the Baton call is made and
   * recorded, waiting, and the user is asked; when ADK runs the tool again with the user's answer
   * (the same function call, so the same Baton call), the call is approved or rejected, and its
   * reply given. Undefined while the user has not answered.
   */
  async #confirmed(
    toolContext: Context,
    request: Parameters<Runtime['call']>[0] & { callId: string },
    signal: AbortSignal | undefined,
  ): Promise<GeminiFunctionResult | undefined> {
    const runtime = this.#runtime;
    const confirmation = toolContext.toolConfirmation;
    if (confirmation !== undefined) {
      return toGeminiResponse(
        await runDecided(runtime, request, { approved: confirmation.confirmed }, signal),
      );
    }
    if (!(await callAwaitingApproval(runtime, request)))
      return toGeminiResponse(await replyOf(runtime, request, signal));
    toolContext.requestConfirmation({
      hint: `Approve or reject ${this.name} (${JSON.stringify(request.args)}).`,
      payload: { callId: request.callId } satisfies BatonConfirmationPayload,
    });
    // The turn ends with the question: the model is not asked to say anything of it.
    toolContext.actions.skipSummarization = true;
    return undefined;
  }
}

/**
 * A runtime's tools as ADK tools, for an `LlmAgent`'s `tools`. Each call is a Baton call: validated
 * (Baton checks the arguments against the same contract), admitted, recorded, and moved to the
 * background past its inline budget, when the model is given the acknowledgement at once. Bring
 * the results back with `batonAdkResults`.
 */
export function batonAdkTools(runtime: Runtime, options: BatonAdkToolsOptions = {}): BaseTool[] {
  return runtime.tools
    .definitions()
    .map((definition) => new BatonAdkTool(runtime, definition, options.sessionId));
}
