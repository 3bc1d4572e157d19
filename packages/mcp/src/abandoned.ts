import type { CallAbortChoice } from '@baton/runtime';
import { SdkError, SdkErrorCode } from '@modelcontextprotocol/server';

/**
 * What the end of a `tools/call` before its answer does to a call still inline, by its reason. A
 * host that gave up waiting (its own timeout, as the SDKs' `notifications/cancelled` say it: "Request
 * timed out") or that went away (the connection closed, as Claude Code's `-p` does at its exit)
 * leaves the call to the background: its end is kept for `wait_background`, a task or a
 * notification, not thrown away with the work done. A cancel for any other reason (a person who
 * pressed stop, a model) cancels it.
 */
export function abandonment(reason: unknown): CallAbortChoice {
  if (reason instanceof SdkError && reason.code === SdkErrorCode.ConnectionClosed) return 'background';
  return /timed?[\s_-]?out/i.test(String(reason)) ? 'background' : 'cancel';
}
