import type { CallStatus, ExecutionMode, TerminalStatus } from '@baton/contracts';
import { fromTransition, initialTransition, type StateValue, transition } from 'xstate';
import {
  type CallAction,
  type CallMachineEvent,
  type CallMachineInput,
  callMachine,
} from './call-machine.js';

/** Where in the machine a call is: a top-level state, and inside a running or queued one, which of its own. */
export type CallPath =
  | 'queued.waiting'
  | 'queued.awaiting_approval'
  | 'inline.running'
  | 'inline.retry_wait'
  | 'backgrounded.running'
  | 'backgrounded.retry_wait'
  | TerminalStatus;

/** Where a call is: the machine's state and context, as plain data. One shared object per kind. */
export interface CallState {
  readonly path: CallPath;
  /** The top-level state: the status on the wire and in the record. */
  readonly status: CallStatus;
  readonly mode: ExecutionMode;
  readonly detached: boolean;
}

/** One transition: where the call is after it, and the machine's named effects, in order. */
export interface CallStep {
  readonly state: CallState;
  readonly actions: readonly CallAction[];
}

const MODES: readonly ExecutionMode[] = ['inline', 'auto', 'background'];

/** The shared state objects, by path, then by mode and detached flag (no key is built per lookup). */
const states = new Map<CallPath, CallState[]>();
/** The steps out of each state object, by event: asked of the machine once each. */
const steps = new Map<CallState, Map<CallMachineEvent['type'], CallStep>>();

/** The one shared object for a state, so that "nothing changed" is an identity test. */
export function callState(path: CallPath, mode: ExecutionMode, detached: boolean): CallState {
  let kinds = states.get(path);
  if (!kinds) {
    kinds = [];
    states.set(path, kinds);
  }
  const index = MODES.indexOf(mode) * 2 + (detached ? 1 : 0);
  let state = kinds[index];
  if (!state) {
    state = Object.freeze({ path, status: path.split('.')[0] as CallStatus, mode, detached });
    kinds[index] = state;
  }
  return state;
}

/** Where a stored call is, read from its record: the snapshot a recovered or adopted call starts at. */
export function callStateOf(record: {
  status: CallStatus;
  mode: ExecutionMode;
  detached: boolean;
  approval?: 'pending' | 'approved' | 'rejected';
}): CallState {
  const { status, mode, detached } = record;
  const path: CallPath =
    status === 'queued'
      ? record.approval === 'pending'
        ? 'queued.awaiting_approval'
        : 'queued.waiting'
      : status === 'inline' || status === 'backgrounded'
        ? `${status}.running`
        : status;
  return callState(path, mode, detached);
}

function stateValueOf(path: CallPath): StateValue {
  const [parent, child] = path.split('.') as [string, string | undefined];
  return child === undefined ? parent : { [parent]: child };
}

function pathOf(value: StateValue): CallPath {
  if (typeof value === 'string') return value as CallPath;
  const [parent, child] = Object.entries(value)[0] as [string, StateValue];
  return `${parent}.${pathOf(child)}` as CallPath;
}

/** The machine's own snapshot of a call in this state (for XState's tools, and the first time a step is asked). */
export function snapshotOf(state: CallState) {
  return callMachine.resolveState({
    value: stateValueOf(state.path),
    context: { mode: state.mode, detached: state.detached },
  });
}

/**
 * One step of the call machine, asked of the machine itself (XState's pure `transition()`, which
 * executes nothing and returns the actions) the first time it is needed and remembered after: the
 * states of a call are few (10 paths, 3 modes, detached or not), so every call after the first
 * replays what the machine decided, effects included.
 */
export function nextCallStep(state: CallState, event: CallMachineEvent): CallStep {
  let out = steps.get(state);
  if (!out) {
    out = new Map();
    steps.set(state, out);
  }
  let step = out.get(event.type);
  if (!step) {
    const [next, actions] = transition(callMachine, snapshotOf(state), event);
    step = Object.freeze({
      state: callState(pathOf(next.value), next.context.mode, next.context.detached),
      actions: Object.freeze(
        actions.map(
          (action) =>
            Object.freeze(
              action.params === undefined
                ? { type: action.type }
                : { type: action.type, params: Object.freeze({ ...action.params }) },
            ) as CallAction,
        ),
      ),
    });
    out.set(event.type, step);
  }
  return step;
}

/** Where the call is after the event (the same object when the event changes nothing). */
export function nextCallState(state: CallState, event: CallMachineEvent): CallState {
  return nextCallStep(state, event).state;
}

/** The call machine's start state for a call, asked of the machine once per kind of input. */
export function initialCallState(input: CallMachineInput): CallState {
  const [snapshot] = initialTransition(callMachine, input);
  return callState(pathOf(snapshot.value), snapshot.context.mode, snapshot.context.detached);
}

/**
 * The call machine compiled into lean actor logic: an XState actor per call whose transitions,
 * and the effects they name, are exactly the machine's, without running XState's general
 * interpreter on every event, many times dearer per call (`bench/RESULTS.md`). Its snapshot is the
 * last step: where the call is, and what to do.
 */
export const compiledCallLogic = fromTransition(
  (step: CallStep, event: CallMachineEvent) => nextCallStep(step.state, event),
  ({ input }: { input: CallState }): CallStep => ({ state: input, actions: [] }),
);

export type CompiledCallLogic = typeof compiledCallLogic;
