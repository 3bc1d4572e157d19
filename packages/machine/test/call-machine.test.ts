import { CALL_STATUSES } from '@baton/contracts';
import { describe, expect, it, vi } from 'vitest';
import { createActor } from 'xstate';
import { type CallMachineEvent, callMachine, machineGraph } from '../src/index.js';

type Step = CallMachineEvent['type'];

/** Runs events through a fresh call actor and reports where it ends and whether the caller was detached. */
function run(mode: 'inline' | 'auto' | 'background', steps: Step[]) {
  const actor = createActor(callMachine, { input: { mode } }).start();
  for (const type of steps) actor.send({ type });
  const snapshot = actor.getSnapshot();
  return { state: snapshot.value, detached: snapshot.context.detached, status: snapshot.status };
}

describe('the call machine', () => {
  it('has exactly the states of the wire vocabulary', () => {
    expect(Object.keys(callMachine.states).sort()).toEqual([...CALL_STATUSES].sort());
  });

  it('starts queued; an inline or auto call starts inline, a background call starts backgrounded', () => {
    expect(run('inline', [])).toEqual({ state: 'queued', detached: false, status: 'active' });
    expect(run('inline', ['START']).state).toBe('inline');
    expect(run('auto', ['START']).state).toBe('inline');
    expect(run('background', ['START'])).toEqual({ state: 'backgrounded', detached: true, status: 'active' });
  });

  it('promotes an auto call to the background when its budget passes, and only an auto call', () => {
    expect(run('auto', ['START', 'BUDGET'])).toEqual({
      state: 'backgrounded',
      detached: true,
      status: 'active',
    });
    expect(run('inline', ['START', 'BUDGET'])).toEqual({
      state: 'inline',
      detached: false,
      status: 'active',
    });
  });

  it('detaches a queued auto call whose budget passes, which then starts in the background', () => {
    expect(run('auto', ['BUDGET'])).toEqual({ state: 'queued', detached: true, status: 'active' });
    expect(run('auto', ['BUDGET', 'START']).state).toBe('backgrounded');
    expect(run('inline', ['BUDGET', 'START'])).toMatchObject({ state: 'inline', detached: false });
  });

  it.each([
    ['DONE', 'succeeded'],
    ['FAIL', 'failed'],
    ['CANCEL', 'cancelled'],
    ['TIMEOUT', 'timed_out'],
  ] as const)('ends an inline call with %s in %s', (event, state) => {
    expect(run('inline', ['START', event])).toMatchObject({ state, status: 'done' });
  });

  it.each([
    ['DONE', 'succeeded'],
    ['FAIL', 'failed'],
    ['CANCEL', 'cancelled'],
    ['TIMEOUT', 'timed_out'],
  ] as const)('ends a backgrounded call with %s in %s', (event, state) => {
    expect(run('auto', ['START', 'BUDGET', event])).toMatchObject({ state, status: 'done', detached: true });
  });

  it('fails a queued call that is rejected (approval refused), and only a queued one', () => {
    expect(run('inline', ['REJECT'])).toMatchObject({ state: 'failed', status: 'done' });
    expect(run('inline', ['START', 'REJECT']).state).toBe('inline');
  });

  it('cancels a queued call; a queued call neither finishes nor times out', () => {
    expect(run('inline', ['CANCEL'])).toMatchObject({ state: 'cancelled', status: 'done' });
    expect(run('inline', ['DONE', 'FAIL', 'TIMEOUT']).state).toBe('queued');
  });

  it('never leaves a terminal state: later events reach a stopped actor and change nothing', () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    try {
      for (const ending of ['DONE', 'FAIL', 'CANCEL', 'TIMEOUT'] as const) {
        const first = run('auto', ['START', ending]).state;
        expect(run('auto', ['START', ending, 'DONE', 'CANCEL', 'START']).state).toBe(first);
      }
    } finally {
      warn.mockRestore();
    }
  });

  it('starts a recovered call detached when its caller was already answered', () => {
    const actor = createActor(callMachine, { input: { mode: 'auto', detached: true } }).start();
    actor.send({ type: 'START' });
    expect(actor.getSnapshot()).toMatchObject({ value: 'backgrounded', context: { detached: true } });
  });

  it('restores a parked call from its persisted snapshot and carries on', () => {
    const actor = createActor(callMachine, { input: { mode: 'auto' } }).start();
    actor.send({ type: 'START' });
    actor.send({ type: 'BUDGET' });
    const persisted = actor.getPersistedSnapshot();
    const restored = createActor(callMachine, { snapshot: persisted, input: { mode: 'auto' } }).start();
    expect(restored.getSnapshot().value).toBe('backgrounded');
    restored.send({ type: 'DONE' });
    expect(restored.getSnapshot()).toMatchObject({
      value: 'succeeded',
      status: 'done',
      context: { detached: true },
    });
  });
});

describe('machineGraph', () => {
  it('reads the states and transitions of the call machine from its definition', () => {
    const graph = machineGraph(callMachine);
    expect(graph.states.map((state) => [state.id, state.initial, state.final])).toEqual([
      ['queued', true, false],
      ['inline', false, false],
      ['backgrounded', false, false],
      ['succeeded', false, true],
      ['failed', false, true],
      ['cancelled', false, true],
      ['timed_out', false, true],
    ]);
    expect(graph.transitions).toContainEqual({
      from: 'queued',
      to: 'backgrounded',
      event: 'START',
      guard: 'isDetached',
    });
    expect(graph.transitions).toContainEqual({
      from: 'inline',
      to: 'backgrounded',
      event: 'BUDGET',
      guard: 'canPromote',
    });
    expect(graph.transitions).toContainEqual({ from: 'backgrounded', to: 'timed_out', event: 'TIMEOUT' });
    // The budget in the queue only detaches the call: no edge.
    expect(graph.transitions.filter((t) => t.from === 'queued').map((t) => t.to)).toEqual([
      'backgrounded',
      'inline',
      'cancelled',
      'failed',
    ]);
    expect(graph.transitions).toHaveLength(4 + 5 + 4);
  });
});
