import {
  type CallRecord,
  type CallReply,
  type FormattedCall,
  isTerminalStatus,
  redactedArgs,
} from '@baton/contracts';
import {
  APPROVAL_PENDING_MESSAGE,
  ASK_AGAIN_MESSAGE,
  HANDOVER_MESSAGE,
  NOT_SAVED_OUTPUT,
  persistenceFailedMessage,
  truncatedOutput,
} from '../messages.js';
import { modelVisible } from '../outcome.js';
import type { ToolSettings } from '../settings.js';

export type BackgroundReason = 'budget' | 'mode' | 'approval' | 'handover';

/** What a formatter (and a notification) is given of a call: its secret arguments redacted. */
export function formattedCall(record: CallRecord, settings: Pick<ToolSettings, 'secretArgs'>): FormattedCall {
  return {
    callId: record.callId,
    toolName: record.toolName,
    args: redactedArgs(record.args, settings.secretArgs),
  };
}

/** The background continuation and the result scheduling: the reply that tells the caller the call continues, with its id as the handle. */
export function backgroundedReply(
  record: CallRecord,
  settings: ToolSettings,
  reason: BackgroundReason,
): CallReply {
  const output =
    reason === 'approval'
      ? { status: 'awaiting_approval', tool: record.toolName, message: APPROVAL_PENDING_MESSAGE }
      : reason === 'handover'
        ? { status: 'running', tool: record.toolName, call_id: record.callId, message: HANDOVER_MESSAGE }
        : settings.formatter.running(
            formattedCall(record, settings),
            reason === 'budget' ? settings.inlineBudgetMs : undefined,
          );
  return { callId: record.callId, status: 'backgrounded', output };
}

/** The reply a record gives: its end, or, while it runs, that it continues in the background. */
export function replyOf(record: CallRecord, settings: ToolSettings): CallReply {
  if (!isTerminalStatus(record.status)) {
    return {
      callId: record.callId,
      status: 'backgrounded',
      output: settings.formatter.running(formattedCall(record, settings)),
    };
  }
  const reply: CallReply = { callId: record.callId, status: record.status, output: record.output };
  if (record.error) reply.error = modelVisible(record.error);
  if (record.images) reply.images = record.images;
  return reply;
}

/**
 * The reply to a caller whose call goes on while this process stops, not yet detached: its end
 * would be its reply, which this process will not be there to give, and `backgrounded` would
 * promise a notification that may never come. The same request again, elsewhere, hears of it.
 */
export function askAgainReply(callId: string): CallReply {
  return {
    callId,
    status: 'failed',
    output: { error: ASK_AGAIN_MESSAGE },
    error: { code: 'closed', message: ASK_AGAIN_MESSAGE },
  };
}

/** What a stopping process tells the caller of a call it holds no more: its end, that it goes on in the background, or to ask again. */
export function handedOverReply(record: CallRecord, settings: ToolSettings): CallReply {
  return isTerminalStatus(record.status) || record.detached
    ? replyOf(record, settings)
    : askAgainReply(record.callId);
}

/** The reply of a call whose record could not be written (or read): the call is not run. */
export function notSavedReply(callId: string): (cause: unknown) => CallReply {
  return (cause) => ({
    callId,
    status: 'failed',
    output: { error: NOT_SAVED_OUTPUT },
    error: { code: 'persistence_failed', message: persistenceFailedMessage(cause) },
  });
}

/** The batch rules: what the model is shown of a long value is cut; the record keeps the whole. */
export function forModel(value: unknown, maxChars: number): unknown {
  if (typeof value === 'string') {
    return value.length > maxChars ? truncatedOutput(value, maxChars) : value;
  }
  if (typeof value !== 'object' || value === null) return value;
  const text = JSON.stringify(value);
  return text.length > maxChars ? truncatedOutput(text, maxChars) : value;
}
