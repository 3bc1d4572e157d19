import type { SessionUpdate, ToolCallContent, ToolCallStatus, ToolKind } from '@agentclientprotocol/sdk';
import { type CallReply, type Notification, notificationText, replyText } from '@baton/contracts';

/** What an ACP client is told of a tool call: a `tool_call` first, then `tool_call_update`s. */
export type ToolCallReport = Extract<SessionUpdate, { sessionUpdate: 'tool_call' | 'tool_call_update' }>;

/**
 * Where the reports say what Baton knows that ACP has no word for: the Baton call, and a status
 * of its own (`backgrounded`: the call goes on past its turn). Clients that do not know the key
 * show the ACP status, `in_progress`.
 */
export const BATON_META = 'baton';

const text = (value: string): ToolCallContent => ({
  type: 'content',
  content: { type: 'text', text: value },
});

/** The `tool_call` that announces a call: pending, with its input, before Baton admits it. */
export function announced(call: {
  toolCallId: string;
  name: string;
  args: unknown;
  title: string;
  kind: ToolKind;
}): ToolCallReport {
  return {
    sessionUpdate: 'tool_call',
    toolCallId: call.toolCallId,
    title: call.title,
    name: call.name,
    kind: call.kind,
    status: 'pending',
    rawInput: call.args,
  };
}

/** What a running call has shown so far: each report replaces the content with all of it. */
export interface RunningView {
  status?: string;
  progress?: string;
  update?: string;
  logTail?: string;
}

/** The call runs: in progress, with what it has shown. */
export function running(toolCallId: string, view: RunningView): ToolCallReport {
  const lines = [view.status, view.progress, view.update].filter((line) => line !== undefined);
  const content = lines.map(text);
  if (view.logTail !== undefined) content.push(text(view.logTail));
  return { sessionUpdate: 'tool_call_update', toolCallId, status: 'in_progress', content };
}

/** ACP v1 has no status for a call that was stopped: `failed`, with its words. */
const statusOf = (status: CallReply['status']): ToolCallStatus =>
  status === 'succeeded' ? 'completed' : status === 'backgrounded' ? 'in_progress' : 'failed';

/**
 * The call's reply within its turn: its end, or (`backgrounded`) the acknowledgement, with the
 * call still in progress; what the model was told is the content either way.
 */
export function replied(toolCallId: string, callId: string, reply: CallReply): ToolCallReport {
  const { text: said } = replyText(reply);
  return {
    sessionUpdate: 'tool_call_update',
    toolCallId,
    status: statusOf(reply.status),
    content: [text(said)],
    ...(reply.status === 'succeeded' ? { rawOutput: reply.output } : {}),
    _meta: { [BATON_META]: { callId, status: reply.status } },
  };
}

/**
 * A notification of a call that went to the background: its end (completed or failed, what the
 * model reads of it as the content, the tool's own output as the raw output) or, while it runs,
 * its latest update.
 */
export function notified(toolCallId: string, notification: Notification, output: unknown): ToolCallReport {
  const status: ToolCallStatus =
    notification.outcome === 'running'
      ? 'in_progress'
      : notification.outcome === 'succeeded'
        ? 'completed'
        : 'failed';
  return {
    sessionUpdate: 'tool_call_update',
    toolCallId,
    status,
    content: [text(notificationText(notification))],
    ...(notification.outcome === 'succeeded' ? { rawOutput: output } : {}),
    _meta: { [BATON_META]: { callId: notification.callId, status: notification.outcome } },
  };
}
