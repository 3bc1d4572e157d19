import { type Notification, notificationText } from '@baton/contracts';
import type { Runtime } from '@baton/runtime';
import type { ModelMessage, PrepareStepFunction } from 'ai';

export interface BatonNotificationsOptions {
  sessionId: string;
}

/** The message that brings a background result into the conversation (the background continuation's notification). */
export function notificationMessage(notification: Notification): ModelMessage {
  return { role: 'user', content: [{ type: 'text', text: notificationText(notification) }] };
}

export interface BatonNotifications {
  /**
   * For `generateText` / `streamText`'s `prepareStep`: adds the session's pending notifications to
   * the step's messages, and keeps them in the steps after it, where they were first given.
   * The result scheduling: `interrupt` at the next step; `when_idle` at the first step of the next
   * turn (the model had finished the one before); `silent` never (it is acknowledged unread).
   * Each one is acknowledged once it is in a step's messages, so it is given exactly once.
   */
  prepareStep: PrepareStepFunction;
  /** The notification messages given so far, in order. */
  readonly delivered: readonly ModelMessage[];
  /**
   * The turn's conversation as the model saw it: `messages` (the history the turn was given, then
   * `result.response.messages`) with this turn's notifications where they went in. Keep it as the
   * history of the next turn.
   */
  history(messages: readonly ModelMessage[]): ModelMessage[];
}

/**
 * Where a turn's first step takes its notifications: before the user's new words (the results came
 * first), as the other bridges place them; after the history when the turn has no new words.
 */
function turnStartIndex(messages: readonly ModelMessage[]): number {
  let at = messages.length;
  while (at > 0 && messages[at - 1]?.role === 'user') at--;
  return at === 0 ? messages.length : at;
}

export function batonNotifications(
  runtime: Runtime,
  { sessionId }: BatonNotificationsOptions,
): BatonNotifications {
  const delivered: ModelMessage[] = [];
  /** This turn's notification messages, each at the index of the step's messages where it went in. */
  let placed: Array<{ at: number; message: ModelMessage }> = [];
  /** The steps of a turn share a growing history: a message given at index `at` stays there. */
  const withPlaced = (messages: readonly ModelMessage[]): ModelMessage[] => {
    const merged: ModelMessage[] = [];
    let next = 0;
    for (const [index, message] of messages.entries()) {
      for (; next < placed.length && (placed[next]?.at ?? 0) <= index; next++)
        merged.push((placed[next] as { message: ModelMessage }).message);
      merged.push(message);
    }
    for (; next < placed.length; next++) merged.push((placed[next] as { message: ModelMessage }).message);
    return merged;
  };
  const prepareStep: PrepareStepFunction = async ({ stepNumber, messages }) => {
    // A new turn: the history the application passed holds what was given before.
    if (stepNumber === 0) placed = [];
    // At a turn's start, before the user's new words; during the run, after the latest tool results.
    const at = stepNumber === 0 ? turnStartIndex(messages) : messages.length;
    for (const notification of await runtime.notifications.take({ sessionId, idle: stepNumber === 0 })) {
      const message = notificationMessage(notification);
      placed.push({ at, message });
      delivered.push(message);
    }
    return placed.length === 0 ? undefined : { messages: withPlaced(messages) };
  };
  return { prepareStep, delivered, history: withPlaced };
}
