import type { Clock } from '../clock.js';
import type { LiveCall } from './live-call.js';
import type { Timers } from './timers.js';

export interface StallsDeps {
  timers: Pick<Timers, 'armFor'>;
  clock: Pick<Clock, 'now'>;
  /** What becomes of a run that stalled: tried again, or ended `timed_out` (see Attempts.stalled). */
  stalled: (call: LiveCall) => void;
}

/**
 * Stalls, for a tool with `heartbeatTimeoutMs` (Temporal's heartbeat timeout): a running attempt
 * that gives no sign of life for that long is stopped. A sign only stamps the time; one timer
 * per call looks when the quiet time could have passed, and again later if a sign came since, so
 * a tool that reports often costs no more than one that reports once. Time spent waiting for an
 * event, an input or a message is not quiet: the call is waiting by design.
 */
export class Stalls {
  constructor(private readonly deps: StallsDeps) {}

  /** A run starts: its quiet time counts from now. */
  watch(call: LiveCall): void {
    const ms = call.tool.execution.heartbeatTimeoutMs;
    if (ms === undefined) return;
    this.sign(call);
    this.#lookIn(call, ms);
  }

  sign(call: LiveCall): void {
    signOfLife(call, this.deps.clock);
  }

  #lookIn(call: LiveCall, ms: number): void {
    this.deps.timers.armFor(call, 'stall', ms, () => this.#look(call));
  }

  #look(call: LiveCall): void {
    const ms = call.tool.execution.heartbeatTimeoutMs;
    if (ms === undefined || !call.executing || call.dropped) return;
    if (call.record.waitingFor !== undefined) this.sign(call);
    const quietMs = this.deps.clock.now() - call.talk.lastSignAt;
    if (quietMs < ms) this.#lookIn(call, ms - quietMs);
    else this.deps.stalled(call);
  }
}

/** The running attempt gave a sign of life now (what the tool's context calls on each report); kept only where a stall is watched for. */
export function signOfLife(call: LiveCall, clock: Pick<Clock, 'now'>): void {
  if (call.tool.execution.heartbeatTimeoutMs !== undefined) call.talk.lastSignAt = clock.now();
}
