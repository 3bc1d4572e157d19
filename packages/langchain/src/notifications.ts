import { type Notification, notificationText } from '@baton/contracts';
import type { Runtime } from '@baton/runtime';
import { type BaseMessage, HumanMessage, RemoveMessage, ToolMessage } from '@langchain/core/messages';
import { createMiddleware } from 'langchain';

export interface BatonNotificationsOptions {
  sessionId: string;
}

/** The message that brings a background result into the conversation. */
export function notificationMessage(notification: Notification): HumanMessage {
  return new HumanMessage({
    content: notificationText(notification),
    id: `baton-notification-${notification.id}`,
  });
}

/**
 * The update of a graph's `messages` that gives the model the session's due notifications, each
 * once (it is acknowledged as it is taken), under the result scheduling: at a turn's start
 * `when_idle` and `interrupt` ones, placed before the user's words (they came first), or after the
 * history in a turn that a result starts alone; during a run (after tool results) `interrupt`
 * ones, after the latest results; `silent` ones never. Empty when none is due.
 */
export async function notificationUpdate(
  runtime: Runtime,
  { sessionId }: BatonNotificationsOptions,
  messages: readonly BaseMessage[],
): Promise<BaseMessage[]> {
  const last = messages.at(-1);
  // During a run the model is called after tool results; otherwise it had finished its turn.
  const idle = last === undefined || !ToolMessage.isInstance(last);
  const due = await runtime.notifications.take({ sessionId, idle });
  if (due.length === 0) return [];
  const given = due.map(notificationMessage);
  // The messages reducer appends, and keeps a message in place when its id comes again: the
  // user's words go out, and come back in after the notifications under an id of their own.
  if (last !== undefined && HumanMessage.isInstance(last) && last.id !== undefined) {
    const again = new HumanMessage({
      content: last.content,
      additional_kwargs: last.additional_kwargs,
      response_metadata: last.response_metadata,
      ...(last.name !== undefined ? { name: last.name } : {}),
      id: `${last.id}-after-notifications`,
    });
    return [new RemoveMessage({ id: last.id }), ...given, again];
  }
  return given;
}

/**
 * A LangGraph node to put before the model's: `graph.addNode('notifications', batonNotificationsNode(runtime, { sessionId }))`,
 * with an edge from it to the model.
 */
export function batonNotificationsNode(runtime: Runtime, options: BatonNotificationsOptions) {
  return async (state: { messages: BaseMessage[] }): Promise<{ messages: BaseMessage[] }> => ({
    messages: await notificationUpdate(runtime, options, state.messages),
  });
}

/** For `createAgent({ middleware })`: the notifications before every model call (see `notificationUpdate`). */
export function batonNotificationsMiddleware(runtime: Runtime, options: BatonNotificationsOptions) {
  return createMiddleware({
    name: 'BatonNotifications',
    beforeModel: async (state) => {
      const messages = await notificationUpdate(runtime, options, state.messages);
      return messages.length === 0 ? undefined : { messages };
    },
  });
}
