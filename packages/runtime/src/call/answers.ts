import type { CallState } from '@baton/machine';
import type { Clock } from '../clock.js';
import type { WriteBatcher } from '../write-batcher.js';
import type { LiveCall } from './live-call.js';
import type { CallRegistry } from './registry.js';
import { type BackgroundReason, backgroundedReply, notSavedReply, replyOf } from './replies.js';
import type { CallWrites } from './writes.js';

export interface AnswersDeps {
  writes: CallWrites;
  writer: Pick<WriteBatcher, 'recordConfirmed'>;
  registry: Pick<CallRegistry, 'detached'>;
  clock: Clock;
}

/** The two ways a caller is answered: at once that the call continues, or with its end. */
export class Answers {
  constructor(private readonly deps: AnswersDeps) {}

  /**
   * The `answerBackgrounded` action (the background continuation, the result scheduling): the caller hears at once that the call
   * continues, with its id as the handle, once the record that says so is written.
   */
  backgrounded(call: LiveCall, reason: BackgroundReason, from: CallState, to: CallState): void {
    const { writes, writer, registry, clock } = this.deps;
    const record = call.record;
    record.detached = true;
    registry.detached(call);
    writes.emit(call, {
      type: 'backgrounded',
      reason,
      afterMs: clock.now() - record.createdAt,
      from: from.status,
      to: to.status,
    });
    const reply = backgroundedReply(record, call.settings, reason);
    record.acknowledgement = reply.output;
    call.answer(writer.recordConfirmed(record).then(() => reply, notSavedReply(record.callId)));
  }

  /**
   * The `answerCaller` action: the caller gets the end once it is written (see `writeEnd`). One
   * answered already (told the call went on in the background) gets nothing: no reply is built.
   */
  ended(call: LiveCall): void {
    if (!call.unanswered) return;
    const { record } = call;
    const written = call.endWritten ?? Promise.resolve();
    call.answer(written.then(() => replyOf(record, call.settings), notSavedReply(record.callId)));
  }
}
