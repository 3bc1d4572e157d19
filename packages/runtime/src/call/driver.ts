import type { RecordedError } from '@baton/contracts';
import type { CallAction, CallActionType, CallMachineEvent, CallState } from '@baton/machine';
import type { Outcome } from '../outcome.js';
import type { LiveCall } from './live-call.js';

/** An event for a call's machine, with what the effects of its transition need to know. */
export type DriverEvent =
  | { type: 'ADMIT' | 'START' | 'BUDGET' | 'APPROVE' | 'RUN' | 'REQUEUE' | 'TIMEOUT' | 'HANDOVER' }
  | { type: 'DONE'; outcome: Extract<Outcome, { ok: true }> }
  | { type: 'FAIL' | 'REJECT'; outcome: Extract<Outcome, { ok: false }> }
  | { type: 'RETRY'; error: RecordedError }
  | { type: 'CANCEL'; reason?: string };

/** Sends an event to a call: the one way anything tells a call's machine anything. */
export type Send = (call: LiveCall, event: DriverEvent) => void;

/**
 * The runtime's way of carrying out each action the machine names. Each is given the event and the
 * states the call left (`from`) and entered (`to`), as arguments: a transition allocates nothing.
 */
export type Effects = {
  [T in CallActionType]: Effect<Extract<CallAction, { type: T }>>;
};

export type Effect<A extends CallAction = CallAction> = (
  call: LiveCall,
  action: A,
  event: DriverEvent,
  from: CallState,
  to: CallState,
) => void;

/** The machine's events carry no data: one shared object each serves every call. */
const MACHINE_EVENTS: { readonly [T in CallMachineEvent['type']]: Readonly<{ type: T }> } = {
  ADMIT: { type: 'ADMIT' },
  START: { type: 'START' },
  BUDGET: { type: 'BUDGET' },
  APPROVE: { type: 'APPROVE' },
  REJECT: { type: 'REJECT' },
  RETRY: { type: 'RETRY' },
  RUN: { type: 'RUN' },
  REQUEUE: { type: 'REQUEUE' },
  DONE: { type: 'DONE' },
  FAIL: { type: 'FAIL' },
  CANCEL: { type: 'CANCEL' },
  TIMEOUT: { type: 'TIMEOUT' },
  HANDOVER: { type: 'HANDOVER' },
};

/**
 * The call driver: sends each event to the call's actor, copies the state the machine decided onto
 * the record, and carries out the actions the machine named, in order. The machine owns every
 * transition and names every effect; this is the only place the runtime reacts to one.
 *
 * Its mailbox makes each event run to completion, as an actor's does (XState's `Mailbox`): an
 * event sent while a transition's actions run (a slot that starts a call, a tool that returns at
 * once, a budget already spent) waits until the last of them has run, then is handled, in the
 * order the events were sent. So no action depends on its place in its list. The mailbox keeps its
 * storage between uses: sending allocates nothing.
 */
export class CallDriver {
  #effects: Effects | undefined;
  /** An event is being handled: what is sent meanwhile waits in the mailbox. */
  #handling = false;
  readonly #waitingCalls: Array<LiveCall | undefined> = [];
  readonly #waitingEvents: Array<DriverEvent | undefined> = [];
  #waiting = 0;

  /** The effects come from modules that themselves send events: they are given once all exist. */
  use(effects: Effects): void {
    this.#effects = effects;
  }

  readonly send: Send = (call, event) => {
    if (this.#handling) {
      this.#waitingCalls[this.#waiting] = call;
      this.#waitingEvents[this.#waiting] = event;
      this.#waiting++;
      return;
    }
    this.#handling = true;
    let failure: { error: unknown } | undefined;
    try {
      this.#handle(call, event);
    } catch (error) {
      failure = { error };
    }
    // What the actions sent, in order, each to completion; one that throws stops none of the others.
    for (let i = 0; i < this.#waiting; i++) {
      const waiting = this.#waitingCalls[i] as LiveCall;
      const next = this.#waitingEvents[i] as DriverEvent;
      this.#waitingCalls[i] = undefined;
      this.#waitingEvents[i] = undefined;
      try {
        this.#handle(waiting, next);
      } catch (error) {
        failure ??= { error };
      }
    }
    this.#waiting = 0;
    this.#handling = false;
    if (failure) throw failure.error;
  };

  #handle(call: LiveCall, event: DriverEvent): void {
    if (call.dropped) return;
    const from = call.state;
    const step = call.send(MACHINE_EVENTS[event.type]);
    if (step.state === from && step.actions.length === 0) return;
    call.record.status = step.state.status;
    const effects = this.#effects as Effects;
    const { actions, state } = step;
    // Indexed, not for...of: its iterator's results were garbage left by every call.
    for (let i = 0; i < actions.length; i++) {
      const action = actions[i] as CallAction;
      (effects[action.type] as Effect)(call, action, event, from, state);
    }
  }
}
