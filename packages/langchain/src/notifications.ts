import { type Notification, notificationText } from '@baton/contracts';
import type { Runtime } from '@baton/runtime';
import { type PullDelivery, pullDelivery } from '@baton/runtime/bridge';
import { type BaseMessage, HumanMessage, RemoveMessage, ToolMessage } from '@langchain/core/messages';
import { createMiddleware } from 'langchain';

export interface BatonNotificationsOptions {
  sessionId: string;
}

const messageIdOf = (notification: Pick<Notification, 'id'>) => `baton-notification-${notification.id}`;

/** The message that brings a background result into the conversation. */
export function notificationMessage(notification: Notification): HumanMessage {
  return new HumanMessage({ content: notificationText(notification), id: messageIdOf(notification) });
}

/**
 * The update of a graph's `messages` that gives the model the session's due results, each once,
 * under the result scheduling: at a turn's start all of them, placed before the user's words (they
 * came first), or after the history in a turn that a result starts alone; during a run (after tool
 * results) `interrupt` and `silent` ones, after the latest results. Empty when none is due. A
 * result already in `messages` (the thread's state kept it) is in the conversation: it is
 * acknowledged, and not given again.
 */
async function notificationUpdate(
  delivery: PullDelivery,
  messages: readonly BaseMessage[],
): Promise<BaseMessage[]> {
  const last = messages.at(-1);
  // During a run the model is called after tool results; otherwise it had finished its turn.
  const idle = last === undefined || !ToolMessage.isInstance(last);
  const inState = new Set(messages.map((message) => message.id));
  const stored = delivery.held.filter((notification) => inState.has(messageIdOf(notification)));
  await delivery.confirm(stored);
  // A new turn: held still and not in the state, they were given to a model call that failed.
  if (idle) await delivery.release();
  const due = await delivery.take({ idle });
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
 * with an edge from it to the model. A result it gives is acknowledged once the thread's state
 * holds it (seen the next time the node runs); one given again (a process that died before) comes
 * under the same message id, which the messages reducer keeps once.
 */
export function batonNotificationsNode(
  runtime: Pick<Runtime, 'notifications'>,
  options: BatonNotificationsOptions,
) {
  const delivery = pullDelivery(runtime, options);
  return async (state: { messages: BaseMessage[] }): Promise<{ messages: BaseMessage[] }> => ({
    messages: await notificationUpdate(delivery, state.messages),
  });
}

/**
 * For `createAgent({ middleware })`: the due results before every model call (see
 * `batonNotificationsNode`), each acknowledged once the model call that was given it answered.
 */
export function batonNotificationsMiddleware(
  runtime: Pick<Runtime, 'notifications'>,
  options: BatonNotificationsOptions,
) {
  const delivery = pullDelivery(runtime, options);
  return createMiddleware({
    name: 'BatonNotifications',
    beforeModel: async (state) => {
      const messages = await notificationUpdate(delivery, state.messages);
      return messages.length === 0 ? undefined : { messages };
    },
    afterModel: async () => {
      await delivery.confirm();
      return undefined;
    },
  });
}
