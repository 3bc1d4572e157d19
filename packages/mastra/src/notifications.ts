import { type Notification, notificationText } from '@baton/contracts';
import type { Runtime } from '@baton/runtime';
import { pullDelivery } from '@baton/runtime/bridge';
import type { MastraDBMessage } from '@mastra/core/agent';
import type { InputProcessor } from '@mastra/core/processors';

export interface BatonNotificationsOptions {
  sessionId: string;
}

const messageIdOf = (notification: Pick<Notification, 'id'>) => `baton-notification-${notification.id}`;

/** The message that brings a background result into the conversation, at `createdAt`. */
export function notificationMessage(notification: Notification, createdAt: Date): MastraDBMessage {
  return {
    id: messageIdOf(notification),
    role: 'user',
    createdAt,
    content: { format: 2, parts: [{ type: 'text', text: notificationText(notification) }] },
  };
}

/** When the turn's new user messages start: the results that came before them go just before. */
function turnStart(messages: readonly MastraDBMessage[]): number | undefined {
  let at = messages.length;
  while (at > 0 && messages[at - 1]?.role === 'user') at--;
  const first = messages[at];
  return first === undefined ? undefined : new Date(first.createdAt).getTime();
}

/**
 * An input processor for an `Agent`'s `inputProcessors`: before every model call, the session's
 * due results come in as messages, each once, by the result scheduling: at a turn's first step
 * all of them, before the user's new words (they came first); at the steps after tool results,
 * `interrupt` and `silent` ones, after them. They are messages of the run (`result.messages`),
 * kept by Mastra's memory where the agent has one. Each is acknowledged once the model call that
 * was given it answered (`processLLMResponse`), or once the conversation is seen to hold it; one
 * given to a model call that failed, or in a process that died first, is given again under the
 * same message id.
 */
export function batonNotificationsProcessor(
  runtime: Pick<Runtime, 'notifications'>,
  { sessionId }: BatonNotificationsOptions,
): InputProcessor {
  const delivery = pullDelivery(runtime, { sessionId });
  return {
    id: 'baton-notifications',
    name: 'Baton notifications',
    async processInputStep({ stepNumber, messages, messageList }) {
      const idle = stepNumber === 0;
      if (idle) {
        // A new turn: those the conversation holds were seen; the others were given to a run
        // that did not finish, and are given again.
        const held = new Set(messages.map((message) => message.id));
        await delivery.confirm(delivery.held.filter((notification) => held.has(messageIdOf(notification))));
        await delivery.release();
      } else {
        // The step before ran: its model had what it was given.
        await delivery.confirm();
      }
      const due = await delivery.take({ idle });
      if (due.length === 0) return undefined;
      const start = idle ? turnStart(messages) : undefined;
      // Mastra orders messages by their time: just before the turn's words, or now.
      const first = start === undefined ? Date.now() : start - due.length;
      due.forEach((notification, index) => {
        messageList.add(notificationMessage(notification, new Date(first + index)), 'input');
      });
      return messageList;
    },
    // The model call that was given them answered; one that failed ends its chunks with an error.
    async processLLMResponse({ chunks }) {
      if (!chunks.some((chunk) => chunk.type === 'error')) await delivery.confirm();
    },
  };
}
