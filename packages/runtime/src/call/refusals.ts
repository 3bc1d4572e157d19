import type { CallRecord, CallReply, RecordedError } from '@baton/contracts';
import { CLOSED_MESSAGE } from '../messages.js';
import type { CallRequest } from '../options.js';
import { isPromiseLike } from './attempts.js';
import { failedReply } from './prepare-inputs.js';

/** The reply to a request that reached a closed runtime: nothing of it is kept. */
export function closedReply(callId: string): CallReply {
  return failedReply(callId, { code: 'closed', message: CLOSED_MESSAGE });
}

/** The record of a refused call: ended `failed` at once, never run, its arguments kept if given. */
export function refusedRecord(
  request: CallRequest,
  callId: string,
  createdAt: number,
  args: unknown,
  error: RecordedError,
): CallRecord {
  return {
    callId,
    sessionId: request.sessionId,
    toolName: request.name,
    args,
    status: 'failed',
    mode: 'inline',
    detached: false,
    attempt: 0,
    createdAt,
    endedAt: createdAt,
    durationMs: 0,
    outputTail: '',
    output: { error: error.message },
    error,
    ...(request.messageId !== undefined ? { messageId: request.messageId } : {}),
  };
}

/** Runs a hook that may answer now or later, or throw: `then` gets its value, `failed` what it threw. */
export function runHook<T>(
  hook: () => T | PromiseLike<T>,
  then: (value: T) => Promise<CallReply>,
  failed: (thrown: unknown) => Promise<CallReply>,
): Promise<CallReply> {
  try {
    const given = hook();
    return isPromiseLike(given) ? Promise.resolve(given).then(then, failed) : then(given);
  } catch (thrown) {
    return failed(thrown);
  }
}
