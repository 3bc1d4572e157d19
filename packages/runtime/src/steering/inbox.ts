import { BatonError, type MessageOptions } from '@baton/contracts';
import type { StoreCallFiles } from '@baton/store';
import type { LiveCall } from '../call/live-call.js';
import type { CallWrites } from '../call/writes.js';
import { STEERING_MESSAGES } from '../messages.js';
import { isSentMessage, messageKey } from './sent-message.js';

export interface InboxDeps {
  /** The durable context's wait for an external event: a message is one, under its number's key. */
  waitFor<T>(call: LiveCall, key: string, options: MessageOptions): Promise<T>;
  store: Pick<StoreCallFiles, 'getResolution'>;
  writes: Pick<CallWrites, 'emit' | 'saved'>;
}

/**
 * Steering, on the side of the running tool: the messages sent to its call, read in the order of
 * their numbers. A message is marked read (`messagesRead` on the record, and a `message` event) in
 * the store before the tool gets it, so that each is given once and a call that runs again, here
 * or in another process, goes on from the first it had not read.
 */
export class MessageInbox {
  constructor(private readonly deps: InboxDeps) {}

  next(call: LiveCall, options: MessageOptions): Promise<unknown> {
    return this.#inTurn(call, async () => {
      const messageSeq = (call.record.messagesRead ?? 0) + 1;
      const sent = await this.deps.waitFor<unknown>(
        call,
        messageKey(call.record.callId, messageSeq),
        options,
      );
      const [message] = await this.#markRead(call, [sent]);
      return message;
    });
  }

  take(call: LiveCall): Promise<unknown[]> {
    return this.#inTurn(call, async () => {
      const sent: unknown[] = [];
      for (let seq = (call.record.messagesRead ?? 0) + 1; ; seq++) {
        const kept = await this.deps.store.getResolution(messageKey(call.record.callId, seq));
        if (!kept || !('value' in kept.outcome)) break;
        sent.push(kept.outcome.value);
      }
      return this.#markRead(call, sent);
    });
  }

  /** One read at a time per call: two loops of one tool that read at once get different messages. */
  #inTurn<T>(call: LiveCall, read: () => Promise<T>): Promise<T> {
    if (!call.tool.validateMessage) {
      return Promise.reject(
        new BatonError('not_steerable', STEERING_MESSAGES.notSteerable(call.record.toolName)),
      );
    }
    const talk = call.talk;
    const turn = (talk.messageReads ?? Promise.resolve()).then(read);
    talk.messageReads = turn.catch(() => {});
    return turn;
  }

  async #markRead(call: LiveCall, sent: readonly unknown[]): Promise<unknown[]> {
    const messages: unknown[] = [];
    for (const value of sent) {
      const messageSeq = (call.record.messagesRead ?? 0) + 1;
      const message = isSentMessage(value) ? value.message : value;
      call.record.messagesRead = messageSeq;
      this.deps.writes.emit(call, { type: 'message', messageSeq, message });
      messages.push(message);
    }
    if (messages.length > 0) await this.deps.writes.saved(call);
    return messages;
  }
}
