import { CALL_STATUSES, type ExecutionMode, type TerminalStatus } from '@baton/contracts';
import { describe, expect, it, vi } from 'vitest';
import { createActor } from 'xstate';
import {
  type CallAction,
  type CallMachineEventType,
  type CallPath,
  callMachine,
  machineGraph,
} from '../src/index.js';
import { EVENTS, MODES, NAMED_ACTIONS, PATHS, recordingActor } from './recording.js';

/** Runs events through a call actor from a state and reports where it ends and what it did at the last event. */
function run(
  mode: ExecutionMode,
  steps: CallMachineEventType[],
  from: { path?: CallPath; detached?: boolean } = {},
) {
  const actor = recordingActor({
    path: from.path ?? 'queued.waiting',
    mode,
    detached: from.detached ?? false,
  });
  let actions: CallAction[] = [];
  for (const type of steps) actions = actor.send(type);
  return { path: actor.path, detached: actor.detached, actions };
}

function ending(status: TerminalStatus, detached: boolean): CallAction[] {
  return [
    { type: 'clearTimers' },
    { type: 'recordOutcome', params: { status } },
    ...(status === 'succeeded' ? [] : [{ type: 'abort' } as const]),
    ...(detached
      ? [
          { type: 'notify', params: { status } } as const,
          { type: 'keepArtifacts', params: { status } } as const,
        ]
      : []),
    { type: 'writeEnd' },
    { type: 'answerCaller' },
    ...(status === 'failed' || status === 'timed_out' ? [{ type: 'failBatch' } as const] : []),
    { type: 'releaseSlot' },
  ];
}

const RUN_ATTEMPT: CallAction[] = [
  { type: 'armTimer', params: { timer: 'timeout' } },
  { type: 'runAttempt' },
];

describe('the call machine', () => {
  it('has exactly the states of the wire vocabulary at its top level', () => {
    expect(Object.keys(callMachine.states).sort()).toEqual([...CALL_STATUSES].sort());
  });

  it('starts queued, waiting; a fresh actor starts there whatever its mode', () => {
    for (const mode of MODES) {
      const snapshot = createActor(callMachine, { input: { mode } }).start().getSnapshot();
      expect(snapshot.value).toEqual({ queued: 'waiting' });
      expect(snapshot.context).toEqual({ mode, detached: false });
    }
  });

  it('admits a call into the queue: an auto call arms its budget, a background one is answered at once', () => {
    expect(run('inline', ['ADMIT'])).toEqual({
      path: 'queued.waiting',
      detached: false,
      actions: [{ type: 'enqueue' }],
    });
    expect(run('auto', ['ADMIT']).actions).toEqual([
      { type: 'armTimer', params: { timer: 'budget' } },
      { type: 'enqueue' },
    ]);
    expect(run('background', ['ADMIT'])).toEqual({
      path: 'queued.waiting',
      detached: true,
      actions: [{ type: 'answerBackgrounded', params: { reason: 'mode' } }, { type: 'enqueue' }],
    });
    // A call taken up again (recovered, or claimed from a client) whose caller was answered is only queued.
    expect(run('auto', ['ADMIT'], { detached: true }).actions).toEqual([{ type: 'enqueue' }]);
    expect(run('background', ['ADMIT'], { detached: true }).actions).toEqual([{ type: 'enqueue' }]);
  });

  it('holds a call that needs approval out of the queue, answers its caller, and queues it once approved', () => {
    const from = { path: 'queued.awaiting_approval' as const };
    expect(run('auto', ['ADMIT'], from)).toEqual({
      path: 'queued.awaiting_approval',
      detached: true,
      actions: [{ type: 'answerBackgrounded', params: { reason: 'approval' } }],
    });
    // Recovered while it waits: its caller has heard already.
    expect(run('auto', ['ADMIT'], { ...from, detached: true }).actions).toEqual([]);
    expect(run('auto', ['ADMIT', 'START'], from).path).toBe('queued.awaiting_approval');
    expect(run('auto', ['ADMIT', 'APPROVE'], from)).toEqual({
      path: 'queued.waiting',
      detached: true,
      actions: [
        { type: 'recordApproval', params: { decision: 'approved' } },
        { type: 'write' },
        { type: 'enqueue' },
      ],
    });
    expect(run('auto', ['ADMIT', 'APPROVE', 'START'], from).path).toBe('backgrounded.running');
  });

  it('fails a rejected call, the decision in its record before its end; its end a notification', () => {
    expect(run('auto', ['ADMIT', 'REJECT'], { path: 'queued.awaiting_approval' })).toEqual({
      path: 'failed',
      detached: true,
      actions: [{ type: 'recordApproval', params: { decision: 'rejected' } }, ...ending('failed', true)],
    });
    // Only a call that waits for its approval can be rejected, or approved.
    expect(run('auto', ['ADMIT', 'REJECT'])).toMatchObject({ path: 'queued.waiting', actions: [] });
    expect(run('auto', ['ADMIT', 'START', 'APPROVE'])).toMatchObject({ path: 'inline.running', actions: [] });
    // A call that waits for its approval may still fail otherwise (its store, its process).
    expect(run('auto', ['ADMIT', 'FAIL'], { path: 'queued.awaiting_approval' })).toEqual({
      path: 'failed',
      detached: true,
      actions: ending('failed', true),
    });
  });

  it('hands over a call its runtime stops running: a caller still waiting hears at once that it goes on', () => {
    const handOver = [{ type: 'answerBackgrounded', params: { reason: 'handover' } }];
    for (const mode of ['inline', 'auto'] as const) {
      expect(run(mode, ['ADMIT', 'START', 'HANDOVER'])).toEqual({
        path: 'backgrounded.running',
        detached: true,
        actions: handOver,
      });
      expect(run(mode, ['ADMIT', 'HANDOVER'])).toEqual({
        path: 'queued.waiting',
        detached: true,
        actions: handOver,
      });
    }
    expect(run('auto', ['ADMIT', 'START', 'RETRY', 'HANDOVER']).path).toBe('backgrounded.retry_wait');
    // A caller that has heard already hears nothing more.
    expect(run('background', ['ADMIT', 'START', 'HANDOVER'])).toMatchObject({ actions: [] });
    expect(run('auto', ['ADMIT', 'HANDOVER'], { path: 'queued.awaiting_approval' }).actions).toEqual([]);
  });

  it('starts an inline or auto call inline, a detached one in the background, each with its first attempt', () => {
    expect(run('inline', ['ADMIT', 'START'])).toEqual({
      path: 'inline.running',
      detached: false,
      actions: RUN_ATTEMPT,
    });
    expect(run('auto', ['ADMIT', 'START']).path).toBe('inline.running');
    expect(run('background', ['ADMIT', 'START'])).toEqual({
      path: 'backgrounded.running',
      detached: true,
      actions: RUN_ATTEMPT,
    });
  });

  it('promotes an auto call when its budget passes, running or between attempts, and only an auto call', () => {
    const promoted = [{ type: 'answerBackgrounded', params: { reason: 'budget' } }];
    expect(run('auto', ['ADMIT', 'START', 'BUDGET'])).toEqual({
      path: 'backgrounded.running',
      detached: true,
      actions: promoted,
    });
    expect(run('auto', ['ADMIT', 'START', 'RETRY', 'BUDGET'])).toEqual({
      path: 'backgrounded.retry_wait',
      detached: true,
      actions: promoted,
    });
    expect(run('inline', ['ADMIT', 'START', 'BUDGET'])).toEqual({
      path: 'inline.running',
      detached: false,
      actions: [],
    });
  });

  it('detaches a queued auto call whose budget passes, once; it then starts in the background', () => {
    expect(run('auto', ['ADMIT', 'BUDGET'])).toMatchObject({ path: 'queued.waiting', detached: true });
    expect(run('auto', ['ADMIT', 'BUDGET', 'BUDGET']).actions).toEqual([]);
    expect(run('auto', ['ADMIT', 'BUDGET', 'START']).path).toBe('backgrounded.running');
    expect(run('inline', ['ADMIT', 'BUDGET', 'START'])).toMatchObject({
      path: 'inline.running',
      detached: false,
    });
  });

  it('waits between attempts in retry_wait: the timeout is cleared, the retry timer armed, then the next attempt runs', () => {
    expect(run('auto', ['ADMIT', 'START', 'RETRY'])).toEqual({
      path: 'inline.retry_wait',
      detached: false,
      actions: [
        { type: 'clearTimer', params: { timer: 'timeout' } },
        { type: 'announceRetry' },
        { type: 'armTimer', params: { timer: 'retry' } },
      ],
    });
    expect(run('auto', ['ADMIT', 'START', 'RETRY', 'RUN'])).toEqual({
      path: 'inline.running',
      detached: false,
      actions: RUN_ATTEMPT,
    });
    // Nothing runs while it waits: it neither finishes nor times out, but it can be cancelled or fail.
    expect(run('auto', ['ADMIT', 'START', 'RETRY', 'DONE', 'TIMEOUT']).path).toBe('inline.retry_wait');
    expect(run('auto', ['ADMIT', 'START', 'RETRY', 'CANCEL']).path).toBe('cancelled');
    expect(run('background', ['ADMIT', 'START', 'RETRY', 'FAIL'])).toMatchObject({
      path: 'failed',
      actions: ending('failed', true),
    });
  });

  it.each([
    ['DONE', 'succeeded'],
    ['FAIL', 'failed'],
    ['CANCEL', 'cancelled'],
    ['TIMEOUT', 'timed_out'],
  ] as const)('ends a running call with %s in %s, with every effect of an end named', (event, status) => {
    expect(run('inline', ['ADMIT', 'START', event])).toEqual({
      path: status,
      detached: false,
      actions: ending(status, false),
    });
    expect(run('auto', ['ADMIT', 'START', 'BUDGET', event])).toEqual({
      path: status,
      detached: true,
      actions: ending(status, true),
    });
  });

  it('cancels or fails a queued call; a queued call neither finishes nor times out', () => {
    expect(run('inline', ['ADMIT', 'CANCEL'])).toEqual({
      path: 'cancelled',
      detached: false,
      actions: ending('cancelled', false),
    });
    expect(run('inline', ['ADMIT', 'FAIL']).path).toBe('failed');
    expect(run('inline', ['ADMIT', 'DONE', 'TIMEOUT', 'RUN', 'RETRY']).path).toBe('queued.waiting');
  });

  it('queues a recovered call again from where it was left, as the machine, not by overwriting its status', () => {
    for (const path of ['inline.running', 'backgrounded.running'] as const) {
      expect(run('auto', ['REQUEUE'], { path, detached: path === 'backgrounded.running' })).toMatchObject({
        path: 'queued.waiting',
        actions: [{ type: 'announceQueued' }],
      });
    }
    expect(run('auto', ['REQUEUE'])).toMatchObject({
      path: 'queued.waiting',
      actions: [{ type: 'announceQueued' }],
    });
    expect(run('auto', ['REQUEUE'], { path: 'queued.awaiting_approval' }).actions).toEqual([]);
    expect(run('auto', ['REQUEUE', 'ADMIT'], { path: 'inline.running' }).actions).toEqual([
      { type: 'armTimer', params: { timer: 'budget' } },
      { type: 'enqueue' },
    ]);
  });

  it('never leaves a terminal state', () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    try {
      for (const path of ['succeeded', 'failed', 'cancelled', 'timed_out'] as const) {
        for (const event of EVENTS)
          expect(run('auto', [event], { path })).toMatchObject({ path, actions: [] });
      }
    } finally {
      warn.mockRestore();
    }
  });

  it('reaches every state and names every action from some state', () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const reached = new Set<string>();
    const named = new Set<string>();
    try {
      for (const mode of MODES) {
        for (const detached of [false, true]) {
          for (const path of PATHS) {
            for (const event of EVENTS) {
              const step = run(mode, [event], { path, detached });
              reached.add(step.path);
              for (const action of step.actions) named.add(action.type);
            }
          }
        }
      }
    } finally {
      warn.mockRestore();
    }
    expect([...reached].sort()).toEqual([...PATHS].sort());
    expect([...named].sort()).toEqual(NAMED_ACTIONS);
  });

  it('restores a parked call from its persisted snapshot and carries on', () => {
    const actor = createActor(callMachine, { input: { mode: 'auto' } }).start();
    actor.send({ type: 'ADMIT' });
    actor.send({ type: 'START' });
    actor.send({ type: 'BUDGET' });
    const persisted = actor.getPersistedSnapshot();
    const restored = createActor(callMachine, { snapshot: persisted, input: { mode: 'auto' } }).start();
    expect(restored.getSnapshot().value).toEqual({ backgrounded: 'running' });
    restored.send({ type: 'DONE' });
    expect(restored.getSnapshot()).toMatchObject({
      value: 'succeeded',
      status: 'done',
      context: { detached: true },
    });
  });
});

describe('machineGraph', () => {
  it('reads the states, their own states, and the transitions of the call machine from its definition', () => {
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
    expect(graph.states[0]?.children?.map((child) => [child.id, child.initial])).toEqual([
      ['waiting', true],
      ['awaiting_approval', false],
    ]);
    expect(graph.states[1]?.children?.map((child) => child.id)).toEqual(['running', 'retry_wait']);
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
    expect(graph.transitions).toContainEqual({ from: 'inline', to: 'queued', event: 'REQUEUE' });
    // The budget in the queue only detaches the call, and a retry stays where it is: no edges.
    expect(graph.transitions.filter((t) => t.from === 'queued').map((t) => t.to)).toEqual([
      'failed',
      'cancelled',
      'backgrounded',
      'inline',
      // A rejection, from the state that waits for approval.
      'failed',
    ]);
    expect(graph.transitions).toContainEqual({ from: 'queued', to: 'failed', event: 'REJECT' });
    expect(graph.transitions).toContainEqual({ from: 'inline', to: 'backgrounded', event: 'HANDOVER' });
    expect(graph.transitions).toHaveLength(5 + 7 + 5);
  });
});
