import type { RecordedError } from '@baton/contracts';
import type { CallAction, CallActionType, CallMachineEvent, CallState } from '@baton/machine';
import type { Outcome } from '../outcome.js';
import type { LiveCall } from './live-call.js';

/** An event for a call's machine, with what the effects of its transition need to know. */
export type DriverEvent =
  | { type: 'ADMIT' | 'START' | 'BUDGET' | 'APPROVE' | 'RUN' | 'REQUEUE' | 'TIMEOUT' }
  | { type: 'DONE'; outcome: Extract<Outcome, { ok: true }> }
  | { type: 'FAIL'; outcome: Extract<Outcome, { ok: false }> }
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
  RETRY: { type: 'RETRY' },
  RUN: { type: 'RUN' },
  REQUEUE: { type: 'REQUEUE' },
  DONE: { type: 'DONE' },
  FAIL: { type: 'FAIL' },
  CANCEL: { type: 'CANCEL' },
  TIMEOUT: { type: 'TIMEOUT' },
};

/**
 * The call driver: sends each event to the call's actor, copies the state the machine decided onto
 * the record, and carries out the actions the machine named, in order. The machine owns every
 * transition and names every effect; this is the only place the runtime reacts to one.
 */
export class CallDriver {
  #effects: Effects | undefined;

  /** The effects come from modules that themselves send events: they are given once all exist. */
  use(effects: Effects): void {
    this.#effects = effects;
  }

  readonly send: Send = (call, event) => {
    if (call.dropped) return;
    const from = call.state;
    const step = call.send(MACHINE_EVENTS[event.type]);
    if (step.state === from && step.actions.length === 0) return;
    call.record.status = step.state.status;
    const effects = this.#effects as Effects;
    const { actions, state } = step;
    // Indexed, not for...of: effects send events of their own, so the loop is not optimised whole,
    // and its iterator's results were about 580 of the 7,300 bytes a call left to collect.
    for (let i = 0; i < actions.length; i++) {
      const action = actions[i] as CallAction;
      (effects[action.type] as Effect)(call, action, event, from, state);
    }
  };
}
