import { CALL_STATUSES, type ExecutionMode } from '@baton/contracts';
import { describe, expect, it } from 'vitest';
import { createActor } from 'xstate';
import {
  type CallMachineEvent,
  callMachine,
  compiledCallLogic,
  initialCallState,
  nextCallState,
} from '../src/index.js';

const MODES: ExecutionMode[] = ['inline', 'auto', 'background'];
const EVENTS: CallMachineEvent['type'][] = ['START', 'BUDGET', 'DONE', 'FAIL', 'CANCEL', 'TIMEOUT', 'REJECT'];

/** Every event sequence up to `depth` long. */
function* sequences(depth: number): Generator<CallMachineEvent['type'][]> {
  if (depth === 0) {
    yield [];
    return;
  }
  for (const shorter of sequences(depth - 1)) {
    yield shorter;
    for (const event of EVENTS) yield [...shorter, event];
  }
}

describe('the compiled call logic', () => {
  // Every non-terminal state is reached within two events, so sequences of three take every
  // transition out of every reachable state (terminal states are tested to stay put elsewhere).
  it('decides exactly as the call machine for every mode, detached flag and event sequence up to 3 events', () => {
    const silence = console.warn;
    console.warn = () => {};
    try {
      for (const mode of MODES) {
        for (const detached of [false, true]) {
          for (const sequence of sequences(3)) {
            const machine = createActor(callMachine, { input: { mode, detached } }).start();
            const compiled = createActor(compiledCallLogic, { input: { mode, detached } }).start();
            for (const type of sequence) {
              machine.send({ type });
              compiled.send({ type });
            }
            const expected = machine.getSnapshot();
            expect(
              compiled.getSnapshot().context,
              `${mode} detached=${detached} ${sequence.join(',')}`,
            ).toEqual({
              value: expected.value,
              mode,
              detached: expected.context.detached,
            });
          }
        }
      }
    } finally {
      console.warn = silence;
    }
  }, 30_000);

  it('returns the same state object when an event changes nothing', () => {
    const state = initialCallState({ mode: 'inline' });
    expect(nextCallState(state, { type: 'DONE' })).toBe(state);
    expect(nextCallState(state, { type: 'START' })).toEqual({
      value: 'inline',
      mode: 'inline',
      detached: false,
    });
  });

  it('covers every state of the machine', () => {
    const reached = new Set<string>();
    for (const mode of MODES) {
      for (const sequence of sequences(3)) {
        let state = initialCallState({ mode });
        reached.add(state.value);
        for (const type of sequence) {
          state = nextCallState(state, { type });
          reached.add(state.value);
        }
      }
    }
    expect([...reached].sort()).toEqual([...CALL_STATUSES].sort());
  });
});
