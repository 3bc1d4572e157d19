import type { CallError } from './call.js';

/** The call a formatter shapes a reply for. */
export interface FormattedCall {
  callId: string;
  toolName: string;
  args: unknown;
}

/**
 * Shapes what the model is told about a background call at each step (the result scheduling): the immediate
 * "running" acknowledgement, the final result or error, and a cancellation.
 */
export interface ResultFormatter {
  /** `promotedAfterMs` is set when an `auto` call passed its inline budget (the background continuation's message). */
  running(call: FormattedCall, promotedAfterMs?: number): unknown;
  result(
    call: FormattedCall,
    outcome: { ok: true; value: unknown } | { ok: false; error: CallError },
  ): unknown;
  cancelled(call: FormattedCall): unknown;
}

/**
 * The sentence of an acknowledgement that says how the result comes back. A channel that brings
 * it another way (an MCP client without tasks follows the call with a tool) says that instead.
 */
export const LATER_NOTIFICATION = 'Continue the conversation; a later notification will report the result.';

/** The acknowledgement of a call that passed its inline budget, in the words of the Gemini Live harness. */
export function backgroundContinuationMessage(inlineBudgetMs: number): string {
  return `This tool is taking longer than ${inlineBudgetMs} ms, so it is continuing in the background. ${LATER_NOTIFICATION}`;
}

/**
 * The result scheduling's shapes: `{status: running|completed|error|cancelled, ...}`. The running one names the
 * call, so that a model can follow it with the background-control tools (`wait_background`...).
 */
export const defaultResultFormatter: ResultFormatter = {
  running(call, promotedAfterMs) {
    return promotedAfterMs === undefined
      ? { status: 'running', tool: call.toolName, call_id: call.callId }
      : {
          status: 'running',
          tool: call.toolName,
          call_id: call.callId,
          message: backgroundContinuationMessage(promotedAfterMs),
        };
  },
  result(call, outcome) {
    return outcome.ok
      ? { status: 'completed', tool: call.toolName, result: outcome.value }
      : { status: 'error', tool: call.toolName, error: outcome.error.message };
  },
  cancelled(call) {
    return { status: 'cancelled', call_id: call.callId };
  },
};
