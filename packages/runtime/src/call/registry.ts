import type { AnyTool, CallRecord } from '@baton/contracts';
import { callStateOf } from '@baton/machine';
import type { Settings } from '../settings.js';
import { LiveCall } from './live-call.js';

export interface NewCall {
  record: CallRecord;
  tool: AnyTool;
  args: unknown;
  lastSeq?: number | undefined;
  /** Taken up after its runtime died: it may have durable steps, and its retries count differently. */
  recovered?: boolean | undefined;
}

/**
 * The calls this runtime holds: live (admitted, not ended), and ended but not yet written (so that
 * `get()` never goes back in time). It is the only place a `LiveCall` is made, so that every call,
 * fresh, claimed or recovered, runs with its tool's settings and starts where its record says.
 * It also counts the live calls whose caller was answered `backgrounded` (the background runs' limits).
 */
export class CallRegistry {
  readonly #live = new Map<string, LiveCall>();
  readonly #ending = new Map<string, LiveCall>();
  readonly #backgroundPerSession = new Map<string, number>();
  #backgroundTotal = 0;
  readonly #settings: Pick<Settings, 'forTool' | 'inspect'>;

  constructor(settings: Pick<Settings, 'forTool' | 'inspect'>) {
    this.#settings = settings;
  }

  /** Makes the live call of a record, at the state its record says, and holds it. */
  create({ record, tool, args, lastSeq, recovered }: NewCall): LiveCall {
    const settings = this.#settings.forTool(tool);
    const call = new LiveCall({
      record,
      tool,
      args,
      settings,
      state: callStateOf(record),
      lastSeq,
      recovered,
      inspect: this.#settings.inspect,
    });
    this.#live.set(record.callId, call);
    if (record.detached) this.#countBackground(record.sessionId, 1);
    return call;
  }

  get(callId: string): LiveCall | undefined {
    return this.#live.get(callId);
  }

  has(callId: string): boolean {
    return this.#live.has(callId);
  }

  /** A call that ended here and is held until its end is written. */
  heldEnded(callId: string): LiveCall | undefined {
    return this.#ending.get(callId);
  }

  /** The record of a call held here, live or ending. */
  record(callId: string): CallRecord | undefined {
    return (this.#live.get(callId) ?? this.#ending.get(callId))?.record;
  }

  /** The live calls, as a list that stays as it is while they change. */
  all(): LiveCall[] {
    return [...this.#live.values()];
  }

  get size(): number {
    return this.#live.size;
  }

  /** The calls in flight here: the live ones, and those that ended and wait for their end to be written. */
  get inFlight(): number {
    return this.#live.size + this.#ending.size;
  }

  /** The caller was answered `backgrounded`. */
  detached(call: LiveCall): void {
    this.#countBackground(call.record.sessionId, 1);
  }

  /** The call is no longer live here: it ended, another instance took it, or it went back to the store. */
  release(call: LiveCall): void {
    const { callId, detached, sessionId } = call.record;
    if (this.#live.get(callId) !== call) return;
    this.#live.delete(callId);
    if (detached) this.#countBackground(sessionId, -1);
  }

  /** The call ended: it is held until its end is written (`releaseEnded`). */
  holdEnded(call: LiveCall): void {
    this.release(call);
    this.#ending.set(call.record.callId, call);
  }

  /** Its end is written: the call is no longer held. */
  releaseEnded(call: LiveCall): void {
    if (this.#ending.get(call.record.callId) === call) this.#ending.delete(call.record.callId);
  }

  backgroundIn(sessionId: string): number {
    return this.#backgroundPerSession.get(sessionId) ?? 0;
  }

  get backgroundTotal(): number {
    return this.#backgroundTotal;
  }

  #countBackground(sessionId: string, delta: 1 | -1): void {
    this.#backgroundTotal += delta;
    const count = (this.#backgroundPerSession.get(sessionId) ?? 0) + delta;
    if (count === 0) this.#backgroundPerSession.delete(sessionId);
    else this.#backgroundPerSession.set(sessionId, count);
  }
}
