import { type Notification, notificationText } from '@baton/contracts';
import type { Runtime } from '@baton/runtime';
import { PlacedMessages, pullDelivery, turnStartIndex } from '@baton/runtime/bridge';
import type { ModelMessage } from 'ai';

export interface BatonNotificationsOptions {
  sessionId: string;
}

/** The message that brings a background result into the conversation (the background continuation's notification). */
export function notificationMessage(notification: Notification): ModelMessage {
  return { role: 'user', content: [{ type: 'text', text: notificationText(notification) }] };
}

/**
 * What `prepareStep` is given and gives back, as far as the bridge reads it: the same in `ai` 6 and
 * 7 (7 types `PrepareStepFunction` by the call's tools, which the bridge does not know).
 */
export type PrepareStep = (options: {
  stepNumber: number;
  messages: ModelMessage[];
}) => Promise<{ messages: ModelMessage[] } | undefined>;

export interface BatonNotifications {
  /**
   * For `generateText` / `streamText`'s `prepareStep`: adds the session's due results to the
   * step's messages, and keeps them in the steps after it, where they were first given. The result
   * scheduling: `interrupt` and `silent` at any step; `when_idle` at the first step of a turn (the
   * model had finished the one before).
   */
  prepareStep: PrepareStep;
  /**
   * For `onStepFinish`: the step ran, so the model had the results it was given, and they are
   * acknowledged. A result given to a step that failed is given again in the next turn. Without
   * it, the next step's `prepareStep` acknowledges what the step before was given, and the next
   * turn's first one what its history (`history()`) shows the last step had.
   */
  onStepFinish: () => Promise<void>;
  /** The notification messages given so far, in order. */
  readonly delivered: readonly ModelMessage[];
  /**
   * The turn's conversation as the model saw it: `messages` (the history the turn was given, then
   * `responseMessagesOf(result)`) with this turn's notifications where they went in. Keep it as
   * the history of the next turn.
   */
  history(messages: readonly ModelMessage[]): ModelMessage[];
}

/** What a `generateText` result holds of the turn's messages, in `ai` 6 or 7. */
export type TurnResult =
  | { readonly responseMessages: readonly ModelMessage[] }
  | { readonly response: { readonly messages: readonly ModelMessage[] } };

/**
 * The messages a `generateText` call added to the conversation, every step's: `responseMessages`
 * in `ai` 7 (where `response.messages` is the last step's alone), `response.messages` in `ai` 6.
 */
export function responseMessagesOf(result: TurnResult): ModelMessage[] {
  return [...('responseMessages' in result ? result.responseMessages : result.response.messages)];
}

export function batonNotifications(
  runtime: Pick<Runtime, 'notifications'>,
  { sessionId }: BatonNotificationsOptions,
): BatonNotifications {
  const delivery = pullDelivery(runtime, { sessionId });
  const delivered: ModelMessage[] = [];
  /** The steps of a turn share a growing history: a message given at index `at` stays there. */
  const placed = new PlacedMessages<ModelMessage>();
  /** The message each held result was given as: found again in a history, the model had it. */
  const messageOf = new Map<string, ModelMessage>();
  const prepareStep: PrepareStep = async ({ stepNumber, messages }) => {
    if (stepNumber === 0) {
      // A new turn. A result still held that is in the history the application passed (it kept
      // `history()`) was seen by the step that ran last, whose `onStepFinish` the loop may not
      // pass: it is acknowledged. One not in it was given to a step that did not finish (the turn
      // failed): it is given again.
      // By their words: a history the application stored and read back holds copies.
      const kept = new Set(messages.map((message) => JSON.stringify(message)));
      const seen = delivery.held.filter((notification) =>
        kept.has(JSON.stringify(messageOf.get(notification.id) ?? null)),
      );
      if (seen.length > 0) await delivery.confirm(seen);
      placed.clear();
      messageOf.clear();
      await delivery.release();
    } else {
      // The step before ran: its model had what it was given.
      await delivery.confirm();
    }
    const idle = stepNumber === 0;
    // At a turn's start, before the user's new words; during the run, after the latest tool results.
    const at = idle ? turnStartIndex(messages, (message) => message.role === 'user') : messages.length;
    const given = (await delivery.take({ idle })).map((notification) => {
      const message = notificationMessage(notification);
      messageOf.set(notification.id, message);
      return message;
    });
    placed.place(at, given);
    delivered.push(...given);
    return placed.size === 0 ? undefined : { messages: placed.merged(messages) };
  };
  return {
    prepareStep,
    onStepFinish: () => delivery.confirm(),
    delivered,
    history: (messages) => placed.merged(messages),
  };
}
