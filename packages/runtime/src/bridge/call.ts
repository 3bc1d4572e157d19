import type { CallReply } from '@baton/contracts';
import type { Runtime } from '../runtime-api.js';

/** A tool call as a framework hands it to a bridge. */
export interface FrameworkCall {
  /** The tool's name. */
  name: string;
  /** The arguments, parsed or as the model's JSON text (the OpenAI SDKs give text). */
  args: unknown;
  /** The conversation's Baton session: a background result comes back to it. */
  sessionId: string;
  /** The framework's own id of the call: the Baton call's id, so a step run again is the same call. */
  callId?: string | undefined;
  /** The framework's cancellation of the call: it cancels a call that has not answered yet. */
  signal?: AbortSignal | undefined;
}

/**
 * The arguments as Baton takes them: JSON text parsed. Text that is not JSON goes on as it is, and
 * Baton refuses it with `invalid_arguments`, in words the model can act on.
 */
export function argumentsOf(args: unknown): unknown {
  if (typeof args !== 'string') return args;
  try {
    return JSON.parse(args) as unknown;
  } catch {
    // Not JSON: the call's validation says so.
    return args;
  }
}

/** The `runtime.call` request of a framework's call. */
export function callRequestOf({ name, args, sessionId, callId }: FrameworkCall) {
  return { name, args: argumentsOf(args), sessionId, ...(callId ? { callId } : {}) };
}

/**
 * A framework's call run as a Baton call: validated, admitted, recorded, answered within its
 * inline budget or, past it, with the acknowledgement while it goes on in the background.
 */
export function bridgeCall(runtime: Pick<Runtime, 'call'>, call: FrameworkCall): Promise<CallReply> {
  return runtime.call(callRequestOf(call), call.signal ? { signal: call.signal } : {});
}
