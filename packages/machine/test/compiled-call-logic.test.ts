import { describe, expect, it, vi } from 'vitest';
import { createActor } from 'xstate';
import {
  type CallMachineEventType,
  callState,
  compiledCallLogic,
  initialCallState,
  nextCallState,
  nextCallStep,
} from '../src/index.js';
import { EVENTS, MODES, PATHS, recordingActor } from './recording.js';

/** Every event sequence up to `depth` long. */
function* sequences(depth: number): Generator<CallMachineEventType[]> {
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
  // Starting from every state, sequences of two take every transition out of every state and the
  // one after it: the compiled logic must reach the same state and name the same actions, in order.
  it('decides exactly as the call machine, actions included, from every state, mode and detached flag', () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    try {
      for (const mode of MODES) {
        for (const detached of [false, true]) {
          for (const path of PATHS) {
            for (const sequence of sequences(2)) {
              const machine = recordingActor({ path, mode, detached });
              let state = callState(path, mode, detached);
              for (const type of sequence) {
                const expected = machine.send(type);
                const step = nextCallStep(state, { type });
                state = step.state;
                const where = `${mode} detached=${detached} ${path} ${sequence.join(',')}`;
                expect(step.actions, where).toEqual(expected);
                expect(state, where).toEqual({
                  path: machine.path,
                  status: machine.path.split('.')[0],
                  mode,
                  detached: machine.detached,
                });
              }
            }
          }
        }
      }
    } finally {
      warn.mockRestore();
    }
  }, 60_000);

  it('returns the same state object, and no action, when an event changes nothing', () => {
    const state = initialCallState({ mode: 'inline' });
    expect(state).toBe(callState('queued.waiting', 'inline', false));
    expect(nextCallStep(state, { type: 'DONE' })).toEqual({ state, actions: [] });
    expect(nextCallState(state, { type: 'DONE' })).toBe(state);
    expect(nextCallState(state, { type: 'START' })).toBe(callState('inline.running', 'inline', false));
  });

  it('runs as an actor whose snapshot is the last step', () => {
    const actor = createActor(compiledCallLogic, {
      input: callState('queued.waiting', 'auto', false),
    }).start();
    actor.send({ type: 'ADMIT' });
    expect(actor.getSnapshot().context.actions.map((action) => action.type)).toEqual(['armTimer', 'enqueue']);
    actor.send({ type: 'START' });
    actor.send({ type: 'BUDGET' });
    expect(actor.getSnapshot().context.state).toBe(callState('backgrounded.running', 'auto', true));
  });
});
