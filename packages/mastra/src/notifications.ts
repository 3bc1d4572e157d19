import { type Notification, notificationText } from '@baton/contracts';
import type { Runtime } from '@baton/runtime';
import type { MastraDBMessage } from '@mastra/core/agent';
import type { InputProcessor } from '@mastra/core/processors';

export interface BatonNotificationsOptions {
  sessionId: string;
}

/** The message that brings a background result into the conversation, at `createdAt`. */
export function notificationMessage(notification: Notification, createdAt: Date): MastraDBMessage {
  return {
    id: `baton-notification-${notification.id}`,
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
 * due notifications come in as messages, each once (it is acknowledged as it is taken), by the
 * result scheduling: at a turn's first step `when_idle` and `interrupt` ones, before the user's
 * new words (they came first); at the steps after tool results, `interrupt` ones, after them;
 * `silent` ones never. They are messages of the run (`result.messages`), kept by Mastra's memory
 * where the agent has one.
 */
export function batonNotificationsProcessor(
  runtime: Pick<Runtime, 'notifications'>,
  { sessionId }: BatonNotificationsOptions,
): InputProcessor {
  return {
    id: 'baton-notifications',
    name: 'Baton notifications',
    async processInputStep({ stepNumber, messages, messageList }) {
      const idle = stepNumber === 0;
      const due = await runtime.notifications.take({ sessionId, idle });
      if (due.length === 0) return undefined;
      const start = idle ? turnStart(messages) : undefined;
      // Mastra orders messages by their time: just before the turn's words, or now.
      const first = start === undefined ? Date.now() : start - due.length;
      due.forEach((notification, index) => {
        messageList.add(notificationMessage(notification, new Date(first + index)), 'input');
      });
      return messageList;
    },
  };
}
