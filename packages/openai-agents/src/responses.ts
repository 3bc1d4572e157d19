import { type Notification, notificationText, replyText, toOpenAIResponsesTool } from '@baton/contracts';
import type { Runtime } from '@baton/runtime';
import { bridgeCall, pullDelivery } from '@baton/runtime/bridge';

/** A function call of a Responses API response, as far as the loop reads it (the `openai` SDK's `ResponseFunctionToolCall`). */
export interface ResponsesFunctionCall {
  type: 'function_call';
  call_id: string;
  name: string;
  arguments: string;
  /** Set by the API on a call of a tool declared `async`: the model went on without waiting. */
  async?: boolean;
}

/** The output of a function call, as the next request's input takes it. */
export interface ResponsesFunctionCallOutput {
  type: 'function_call_output';
  call_id: string;
  output: string;
}

/** A message of the user's, as the next request's input takes it. */
export interface ResponsesUserMessage {
  role: 'user';
  content: string;
}

/** What the loop puts into a request's input. */
export type ResponsesInputItem = ResponsesFunctionCallOutput | ResponsesUserMessage;

export interface BatonResponsesOptions {
  /** The conversation's Baton session: its background results come back to it. */
  sessionId: string;
}

/** Baton in a Responses API loop of the application's own, with OpenAI's async tool calling. */
export interface BatonResponses {
  /** The runtime's tools for `responses.create({ tools })`: `async` where the runtime may answer before they end. */
  readonly tools: ReturnType<typeof toOpenAIResponsesTool>[];
  /**
   * Runs a response's function calls as Baton calls (the call id is the Baton call's), all at
   * once, and gives the outputs to send now: each result or failure within its inline budget. A
   * call past its budget that the API marked `async` gets none: the model went on, and its end
   * comes later, as its `function_call_output` (`results`). One the API did not mark `async` is
   * answered with the acknowledgement, as the Responses API wants an output for it now.
   */
  outputs(
    output: readonly { type: string }[],
    options?: { signal?: AbortSignal },
  ): Promise<ResponsesFunctionCallOutput[]>;
  /**
   * The session's due results for the next request's input (the result scheduling: all at a
   * turn's start, `idle`; `interrupt` and `silent` ones after tool outputs): each the
   * `function_call_output` of its original `call_id`, or, for a call whose output the
   * conversation has already (its acknowledgement), a user message of the result.
   */
  results(step: { idle: boolean; input: readonly unknown[] }): Promise<ResponsesInputItem[]>;
  /** The request that was given them answered: the model had them, and they are acknowledged. */
  confirm(): Promise<void>;
}

const isFunctionCall = (item: { type: string }): item is ResponsesFunctionCall =>
  item.type === 'function_call';

/** The call ids the conversation has an output for. */
function answeredIn(input: readonly unknown[]): Set<string> {
  const answered = new Set<string>();
  for (const item of input) {
    const output = item as Partial<ResponsesFunctionCallOutput> | null;
    if (output?.type === 'function_call_output' && typeof output.call_id === 'string')
      answered.add(output.call_id);
  }
  return answered;
}

export function batonResponses(runtime: Runtime, { sessionId }: BatonResponsesOptions): BatonResponses {
  const delivery = pullDelivery(runtime, { sessionId });
  const options = runtime.defaultMode ? { defaultMode: runtime.defaultMode } : {};
  return {
    tools: runtime.tools.definitions().map((definition) => toOpenAIResponsesTool(definition, options)),
    async outputs(output, { signal } = {}) {
      const answers = await Promise.all(
        output.filter(isFunctionCall).map(async (call): Promise<ResponsesFunctionCallOutput | undefined> => {
          const reply = await bridgeCall(runtime, {
            name: call.name,
            args: call.arguments,
            sessionId,
            callId: call.call_id,
            signal,
          });
          if (reply.status === 'backgrounded' && call.async === true) return undefined;
          return { type: 'function_call_output', call_id: call.call_id, output: replyText(reply).text };
        }),
      );
      return answers.filter((answer) => answer !== undefined);
    },
    async results({ idle, input }) {
      // A new turn: held still, they were given to a request that failed.
      if (idle) await delivery.release();
      const answered = answeredIn(input);
      return (await delivery.take({ idle })).map(
        (notification: Notification): ResponsesInputItem =>
          answered.has(notification.callId)
            ? { role: 'user', content: notificationText(notification) }
            : {
                type: 'function_call_output',
                call_id: notification.callId,
                output: notificationText(notification),
              },
      );
    },
    confirm: () => delivery.confirm(),
  };
}
