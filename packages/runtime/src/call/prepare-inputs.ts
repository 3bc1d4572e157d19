import {
  BatonError,
  type CallError,
  type CallReply,
  type InputRequest,
  type InputResponse,
  type PrepareContext,
} from '@baton/contracts';
import { inputRequiredMessage } from '../messages.js';
import type { CallRequest } from '../options.js';

/** The context `prepare` gets: its input requests are answered from the request's `inputs`. */
export class PrepareInputs implements PrepareContext {
  readonly callId: string;
  readonly sessionId: string;
  readonly toolName: string;
  /** The first request the request's `inputs` did not answer. */
  asked: { name: string; request: InputRequest } | undefined;
  readonly #answers: Readonly<Record<string, unknown>>;
  #count = 0;

  constructor(request: CallRequest, callId: string, toolName: string) {
    this.callId = callId;
    this.sessionId = request.sessionId;
    this.toolName = toolName;
    this.#answers = request.inputs ?? {};
  }

  input<R extends InputRequest>(request: R, options?: { name?: string }): Promise<InputResponse<R>> {
    this.#count++;
    const name = options?.name ?? `input-${this.#count}`;
    const answer = Object.hasOwn(this.#answers, name) ? this.#answers[name] : undefined;
    if (typeof answer === 'object' && answer !== null && !Array.isArray(answer)) {
      return Promise.resolve(answer as InputResponse<R>);
    }
    this.asked ??= { name, request };
    return Promise.reject(new BatonError('input_required', inputRequiredMessage(this.toolName, [name])));
  }

  inputRequired(callId: string): CallReply {
    const { name, request } = this.asked as { name: string; request: InputRequest };
    return failedReply(callId, {
      code: 'input_required',
      message: inputRequiredMessage(this.toolName, [name]),
      inputs: { [name]: request },
    });
  }
}

/** A reply that ends a request before its call begins. */
export function failedReply(callId: string, error: CallError): CallReply {
  return { callId, status: 'failed', output: { error: error.message }, error };
}
