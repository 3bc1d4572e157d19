import type Anthropic from '@anthropic-ai/sdk';
import { type Notification, notificationText } from '@baton/contracts';
import type { Runtime } from '@baton/runtime';

export interface NotificationBlocksOptions {
  sessionId: string;
  /**
   * The model finished its turn (`stop_reason` other than `tool_use`): `when_idle` notifications
   * are due too. Otherwise only `interrupt` ones are (the result scheduling).
   */
  idle: boolean;
}

/** The text block that brings a background result into the conversation (the background continuation's notification). */
export function notificationBlock(notification: Notification): Anthropic.Messages.TextBlockParam {
  return { type: 'text', text: notificationText(notification) };
}

/**
 * The session's due notifications as text blocks for the next user turn, each acknowledged so that
 * it is given once. After `tool_result` blocks, or before the user's own words.
 */
export async function notificationBlocks(
  runtime: Runtime,
  { sessionId, idle }: NotificationBlocksOptions,
): Promise<Anthropic.Messages.TextBlockParam[]> {
  return (await runtime.notifications.take({ sessionId, idle })).map(notificationBlock);
}
