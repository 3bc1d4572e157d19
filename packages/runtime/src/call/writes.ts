import type { CallEvent, CallEventInput, CallRecord } from '@baton/contracts';
import type { Clock } from '../clock.js';
import type { WriteBatcher } from '../write-batcher.js';
import type { LiveCall } from './live-call.js';
import type { CallTracing } from './tracing.js';

/**
 * What a call writes: its record and its events, through the write batcher. A call this process no
 * longer owns (dropped) writes nothing.
 */
export class CallWrites {
  readonly #writer: WriteBatcher;
  readonly #clock: Clock;
  readonly #tracing: CallTracing | undefined;

  constructor(writer: WriteBatcher, clock: Clock, tracing?: CallTracing) {
    this.#writer = writer;
    this.#clock = clock;
    this.#tracing = tracing;
  }

  /** Queues an event of the call; it reaches the bus once it is stored (see WriteBatcher). */
  emit(call: LiveCall, input: CallEventInput): void {
    if (call.dropped) return;
    const event = this.stamp(input, call.record, call.nextSeq());
    this.#tracing?.record(call, event);
    this.#writer.add('events', event);
  }

  /** Queues the call's record. */
  save(call: LiveCall): void {
    if (!call.dropped) this.#writer.record(call.record);
  }

  /** `save` of a call's first record, under an id this runtime made up (see `WriteBatcher.recordFirst`). */
  saveFirst(call: LiveCall): void {
    if (!call.dropped) this.#writer.recordFirst(call.record);
  }

  /** `save`, for a caller that waits until the record is written. */
  saved(call: LiveCall): Promise<void> {
    return call.dropped ? Promise.resolve() : this.#writer.recordConfirmed(call.record);
  }

  /**
   * Numbers and dates an event of a record. The caller's literal is stamped in place: copying it
   * with spreads cost more than the rest of an event's life.
   */
  stamp(input: CallEventInput, record: CallRecord, seq: number): CallEvent {
    const event = input as CallEvent;
    event.callId = record.callId;
    event.sessionId = record.sessionId;
    event.toolName = record.toolName;
    event.seq = seq;
    event.at = this.#clock.now();
    return event;
  }
}
