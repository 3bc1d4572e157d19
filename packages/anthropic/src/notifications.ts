import type Anthropic from '@anthropic-ai/sdk';
import { type Notification, notificationText } from '@baton/contracts';
import type { Runtime } from '@baton/runtime';
import { pullDelivery } from '@baton/runtime/bridge';

export interface AnthropicNotificationsOptions {
  sessionId: string;
}

/** The text block that brings a background result into the conversation (the background continuation's notification). */
export function notificationBlock(notification: Notification): Anthropic.Messages.TextBlockParam {
  return { type: 'text', text: notificationText(notification) };
}

export interface AnthropicNotifications {
  /**
   * The session's due results as text blocks for the next user turn: after `tool_result` blocks,
   * or before the user's own words. `idle`: the model finished its turn (`stop_reason` other than
   * `tool_use`), so `when_idle` results are due too; `interrupt` and `silent` ones always are (the
   * result scheduling). A turn's first call (`idle: true`) gives again what a failed request was
   * given.
   */
  blocks(step: { idle: boolean }): Promise<Anthropic.Messages.TextBlockParam[]>;
  /**
   * The request that was given them answered (`messages.create` returned, or the tool runner's
   * run ended): the model had them, and they are acknowledged, given once.
   */
  confirm(): Promise<void>;
}

/** The session's background results for a Messages loop, each given once (the bridge kit's pull delivery). */
export function anthropicNotifications(
  runtime: Pick<Runtime, 'notifications'>,
  { sessionId }: AnthropicNotificationsOptions,
): AnthropicNotifications {
  const delivery = pullDelivery(runtime, { sessionId });
  return {
    async blocks({ idle }) {
      // A new turn: held still, they were given to a request that did not answer.
      if (idle) await delivery.release();
      return (await delivery.take({ idle })).map(notificationBlock);
    },
    confirm: () => delivery.confirm(),
  };
}
