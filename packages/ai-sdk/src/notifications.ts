import type { Notification } from '@baton/contracts';
import type { Runtime } from '@baton/runtime';
import type { ModelMessage, PrepareStepFunction } from 'ai';

export interface BatonNotificationsOptions {
  sessionId: string;
}

/** The message that brings a background result into the conversation (seed 000's notification). */
export function notificationMessage(notification: Notification): ModelMessage {
  return { role: 'user', content: [{ type: 'text', text: `${notification.title}\n${notification.body}` }] };
}

export interface BatonNotifications {
  /**
   * For `generateText` / `streamText`'s `prepareStep`: adds the session's pending notifications to
   * the step's messages, and keeps them in the steps after it, where they were first given.
   * Seed 001's scheduling: `interrupt` at the next step; `when_idle` at the first step of the next
   * turn (the model had finished the one before); `silent` never (it is acknowledged unread).
   * Each one is acknowledged once it is in a step's messages, so it is given exactly once.
   */
  prepareStep: PrepareStepFunction;
  /** The notification messages given so far, in order: keep them in the conversation's history. */
  readonly delivered: readonly ModelMessage[];
}

export function batonNotifications(
  runtime: Runtime,
  { sessionId }: BatonNotificationsOptions,
): BatonNotifications {
  const delivered: ModelMessage[] = [];
  /** This turn's notification messages, each at the index of the step's messages where it went in. */
  let placed: Array<{ at: number; message: ModelMessage }> = [];
  const prepareStep: PrepareStepFunction = async ({ stepNumber, messages }) => {
    // A new turn: the history the application passed holds what was given before.
    if (stepNumber === 0) placed = [];
    for (const notification of await runtime.notifications.take({ sessionId, idle: stepNumber === 0 })) {
      const message = notificationMessage(notification);
      placed.push({ at: messages.length, message });
      delivered.push(message);
    }
    if (placed.length === 0) return undefined;
    // The steps of a turn share a growing history: a message given at index `at` stays there.
    const withNotifications: ModelMessage[] = [];
    let next = 0;
    for (const [index, message] of messages.entries()) {
      for (; placed[next]?.at === index; next++)
        withNotifications.push((placed[next] as { message: ModelMessage }).message);
      withNotifications.push(message);
    }
    for (; next < placed.length; next++)
      withNotifications.push((placed[next] as { message: ModelMessage }).message);
    return { messages: withNotifications };
  };
  return { prepareStep, delivered };
}
