import type { ExecutionMode } from '@baton/contracts';
import { createActor } from 'xstate';
import {
  type CallAction,
  type CallMachineEventType,
  type CallPath,
  callMachine,
  callState,
  snapshotOf,
} from '../src/index.js';

/** Every effect the machine names (its `detach` is an assignment, carried out by the machine itself). */
export const NAMED_ACTIONS = Object.keys(callMachine.implementations.actions)
  .filter((name) => name !== 'detach')
  .sort();

export const EVENTS: CallMachineEventType[] = [
  'ADMIT',
  'START',
  'BUDGET',
  'APPROVE',
  'REJECT',
  'RETRY',
  'RUN',
  'REQUEUE',
  'DONE',
  'FAIL',
  'CANCEL',
  'TIMEOUT',
  'HANDOVER',
];

export const PATHS: CallPath[] = [
  'queued.waiting',
  'queued.awaiting_approval',
  'inline.running',
  'inline.retry_wait',
  'backgrounded.running',
  'backgrounded.retry_wait',
  'succeeded',
  'failed',
  'cancelled',
  'timed_out',
];

export const MODES: ExecutionMode[] = ['inline', 'auto', 'background'];

/** The call machine itself, run by XState's interpreter, with each named action written down as it runs. */
export function recordingActor(start: { path: CallPath; mode: ExecutionMode; detached: boolean }) {
  const done: CallAction[] = [];
  const record = Object.fromEntries(
    NAMED_ACTIONS.map((type) => [
      type,
      (_: unknown, params: unknown) => {
        done.push((params === undefined ? { type } : { type, params }) as CallAction);
      },
    ]),
  );
  const machine = callMachine.provide({ actions: record });
  const actor = createActor(machine, {
    snapshot: snapshotOf(callState(start.path, start.mode, start.detached)),
    input: { mode: start.mode, detached: start.detached },
  }).start();
  return {
    actor,
    /** Sends the event and returns the actions it ran. */
    send(type: CallMachineEventType): CallAction[] {
      done.length = 0;
      actor.send({ type });
      return [...done];
    },
    get path(): CallPath {
      const value = actor.getSnapshot().value;
      if (typeof value === 'string') return value as CallPath;
      const [parent, child] = Object.entries(value)[0] as [string, string];
      return `${parent}.${child}` as CallPath;
    },
    get detached(): boolean {
      return actor.getSnapshot().context.detached;
    },
  };
}
