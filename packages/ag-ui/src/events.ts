import {
  type ActivitySnapshotEvent,
  EventType,
  type Interrupt,
  type RunErrorEvent,
  type RunFinishedEvent,
  type RunStartedEvent,
  type TextMessageContentEvent,
  type TextMessageEndEvent,
  type TextMessageStartEvent,
  type ToolCallArgsEvent,
  type ToolCallEndEvent,
  type ToolCallResultEvent,
  type ToolCallStartEvent,
} from '@ag-ui/core';

/** The events a Baton run sends: those of AG-UI it needs, each typed by its own definition. */
export type AgUiRunEvent =
  | RunStartedEvent
  | RunFinishedEvent
  | RunErrorEvent
  | TextMessageStartEvent
  | TextMessageContentEvent
  | TextMessageEndEvent
  | ToolCallStartEvent
  | ToolCallArgsEvent
  | ToolCallEndEvent
  | ToolCallResultEvent
  | ActivitySnapshotEvent;

/**
 * The activity a Baton call in the background is shown by: its own message in the thread, for the
 * front end only (AG-UI never gives activity messages to the model), replaced as the call goes on.
 */
export const BATON_CALL_ACTIVITY = 'baton_call';

/** What the activity of a call shows. */
export interface CallActivity {
  callId: string;
  toolCallId: string;
  tool: string;
  /** `backgrounded` while it runs past its turn; then how it ended. */
  status: string;
  /** Its latest update (`ctx.update`), while it runs. */
  update?: string;
}

export const activityOf = (content: CallActivity): ActivitySnapshotEvent => ({
  type: EventType.ACTIVITY_SNAPSHOT,
  messageId: `activity-${content.toolCallId}`,
  activityType: BATON_CALL_ACTIVITY,
  content: { ...content },
});

/**
 * One text message: what the assistant says, or (`developer`) what the model is told beside the
 * conversation, such as a background call's update.
 */
export function textMessage(
  messageId: string,
  text: string,
  role: 'assistant' | 'developer' = 'assistant',
): AgUiRunEvent[] {
  return [
    { type: EventType.TEXT_MESSAGE_START, messageId, role },
    { type: EventType.TEXT_MESSAGE_CONTENT, messageId, delta: text },
    { type: EventType.TEXT_MESSAGE_END, messageId },
  ];
}

/** A tool call of the model, its arguments whole. */
export function toolCall(
  call: { id: string; name: string; args: unknown },
  parentMessageId: string,
): AgUiRunEvent[] {
  return [
    { type: EventType.TOOL_CALL_START, toolCallId: call.id, toolCallName: call.name, parentMessageId },
    {
      type: EventType.TOOL_CALL_ARGS,
      toolCallId: call.id,
      delta: typeof call.args === 'string' ? call.args : JSON.stringify(call.args ?? {}),
    },
    { type: EventType.TOOL_CALL_END, toolCallId: call.id },
  ];
}

export const toolResult = (toolCallId: string, messageId: string, content: string): ToolCallResultEvent => ({
  type: EventType.TOOL_CALL_RESULT,
  toolCallId,
  messageId,
  content,
});

export const runStarted = (threadId: string, runId: string): RunStartedEvent => ({
  type: EventType.RUN_STARTED,
  threadId,
  runId,
});

export const runFinished = (
  threadId: string,
  runId: string,
  interrupts: Interrupt[] = [],
): RunFinishedEvent => ({
  type: EventType.RUN_FINISHED,
  threadId,
  runId,
  ...(interrupts.length > 0 ? { outcome: { type: 'interrupt' as const, interrupts } } : {}),
});

export const runError = (message: string, code?: string): RunErrorEvent => ({
  type: EventType.RUN_ERROR,
  message,
  ...(code !== undefined ? { code } : {}),
});
