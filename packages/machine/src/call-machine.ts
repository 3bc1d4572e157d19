import type { ExecutionMode, TerminalStatus } from '@baton/contracts';
import { and, assign, not, setup } from 'xstate';

export interface CallMachineInput {
  mode: ExecutionMode;
  /** The caller already has its `backgrounded` reply (a call started again from its record). Default false. */
  detached?: boolean;
}

export interface CallMachineContext {
  mode: ExecutionMode;
  /** The caller already has its `backgrounded` reply; from here on the result goes to a notification. */
  detached: boolean;
}

/**
 * What the runtime tells the machine. The runtime owns execution and time (it runs the tool and
 * arms the timers the machine asks for); the machine decides what each event means in each state,
 * and names every effect. Keeping the actor free of invoked children and timers of its own is
 * what keeps one actor per call affordable.
 */
export type CallMachineEvent =
  /** The call is in the runtime's hands: it waits for a slot (or for its approval). */
  | { type: 'ADMIT' }
  /** A slot is free: the first attempt starts. */
  | { type: 'START' }
  /** The inline budget passed. */
  | { type: 'BUDGET' }
  /** A person approved the call that waits for approval: it joins the queue. */
  | { type: 'APPROVE' }
  /** A person rejected the call that waits for approval: it fails without running. */
  | { type: 'REJECT' }
  /** The attempt failed and the retry policy runs it again after a backoff. */
  | { type: 'RETRY' }
  /** The backoff passed: the next attempt starts. */
  | { type: 'RUN' }
  /** A recovered call runs again from the start, on this runtime. */
  | { type: 'REQUEUE' }
  | { type: 'DONE' }
  /** The call failed: its tool, its approval, its store, or the process that ran it. */
  | { type: 'FAIL' }
  | { type: 'CANCEL' }
  | { type: 'TIMEOUT' }
  /**
   * The runtime hands the call over (it shuts down, and another process, or its next start, takes
   * the call up): a caller still waiting hears at once that the call goes on in the background.
   */
  | { type: 'HANDOVER' };

export type CallMachineEventType = CallMachineEvent['type'];

/** The timers a call may have armed: at most one of each. */
export type CallTimer = 'budget' | 'timeout' | 'retry';

/**
 * Every effect the machine asks of the runtime, by name. The runtime's call driver carries them out,
 * in this order, after each transition.
 */
export type CallAction =
  /** Tell the caller at once that the call continues in the background (the background continuation, the result scheduling). */
  | { type: 'answerBackgrounded'; params: { reason: 'budget' | 'mode' | 'approval' | 'handover' } }
  | { type: 'armTimer'; params: { timer: CallTimer } }
  | { type: 'clearTimer'; params: { timer: CallTimer } }
  | { type: 'clearTimers' }
  /** Join the admission queue and wait for a slot. */
  | { type: 'enqueue' }
  /** Run the tool once more: attempt + 1, its `started` event, its record. */
  | { type: 'runAttempt' }
  /** The `retrying` event, with the backoff the retry timer waits. */
  | { type: 'announceRetry' }
  /** The `queued` event of a call that is queued again. */
  | { type: 'announceQueued' }
  /** Keep the decision on a call that waited for approval in its record. */
  | { type: 'recordApproval'; params: { decision: 'approved' | 'rejected' } }
  /** Save the record as it is now. */
  | { type: 'write' }
  /** Abort the running execution's signal, with the error the record ends with. */
  | { type: 'abort' }
  /** Fill the record's end (result or error, output) and emit the terminal event. */
  | { type: 'recordOutcome'; params: { status: TerminalStatus } }
  /** The background continuation: the end of a detached call goes to its session as a notification. */
  | { type: 'notify'; params: { status: TerminalStatus } }
  /** The background runs: a background run leaves its `output.log` and `result.json`. */
  | { type: 'keepArtifacts'; params: { status: TerminalStatus } }
  /** Write the end, and stop holding the call as live. */
  | { type: 'writeEnd' }
  /** Give the caller the call's end (once it is written). */
  | { type: 'answerCaller' }
  /** A batch that stops at its first failure cancels its calls that have not started. */
  | { type: 'failBatch' }
  /** Give back the slot (or the place in the queue). */
  | { type: 'releaseSlot' };

export type CallActionType = CallAction['type'];

/** The driver carries the actions out; in the machine they only have their names (and params). */
const named = () => {};

const callSetup = setup({
  types: {
    input: {} as CallMachineInput,
    context: {} as CallMachineContext,
    events: {} as CallMachineEvent,
  },
  guards: {
    isDetached: ({ context }) => context.detached,
    canPromote: ({ context }) => context.mode === 'auto',
    isBackgroundMode: ({ context }) => context.mode === 'background',
  },
  actions: {
    detach: assign({ detached: true }),
    answerBackgrounded: named,
    armTimer: named,
    clearTimer: named,
    clearTimers: named,
    enqueue: named,
    runAttempt: named,
    announceRetry: named,
    announceQueued: named,
    recordApproval: named,
    write: named,
    abort: named,
    recordOutcome: named,
    notify: named,
    keepArtifacts: named,
    writeEnd: named,
    answerCaller: named,
    failBatch: named,
    releaseSlot: named,
  },
});

/** The effects of reaching a terminal state, in the order the driver carries them out. */
function ending(status: TerminalStatus) {
  return [
    { type: 'clearTimers' as const },
    { type: 'recordOutcome' as const, params: { status } },
    ...(status === 'succeeded' ? [] : [{ type: 'abort' as const }]),
    callSetup.enqueueActions(({ check, enqueue }) => {
      if (!check('isDetached')) return;
      enqueue({ type: 'notify', params: { status } });
      enqueue({ type: 'keepArtifacts', params: { status } });
    }),
    { type: 'writeEnd' as const },
    { type: 'answerCaller' as const },
    ...(status === 'failed' || status === 'timed_out' ? [{ type: 'failBatch' as const }] : []),
    { type: 'releaseSlot' as const },
  ];
}

const promote = ['detach', { type: 'answerBackgrounded', params: { reason: 'budget' } }] as const;
/**
 * Whatever its mode: the caller cannot wait for a process that stops. Its record says it is
 * detached (the acknowledgement writes it), so whoever takes it up sends its end to a notification.
 */
const handOver = ['detach', { type: 'answerBackgrounded', params: { reason: 'handover' } }] as const;

/** The states a running call has, the same whether its caller waits (`inline`) or not (`backgrounded`). */
function attemptStates(status: 'inline' | 'backgrounded') {
  const budget = (target: string) =>
    status === 'inline'
      ? {
          BUDGET: { guard: 'canPromote' as const, target: `#call.backgrounded.${target}`, actions: promote },
          HANDOVER: { target: `#call.backgrounded.${target}`, actions: handOver },
        }
      : {};
  return {
    initial: 'running' as const,
    states: {
      running: {
        description: 'The tool is running.',
        on: {
          ...budget('running'),
          RETRY: {
            target: 'retry_wait',
            actions: [
              { type: 'clearTimer', params: { timer: 'timeout' } },
              { type: 'announceRetry' },
              { type: 'armTimer', params: { timer: 'retry' } },
            ],
          },
          DONE: '#call.succeeded',
          TIMEOUT: '#call.timed_out',
        },
      },
      retry_wait: {
        description: 'An attempt failed; the next runs when its backoff passes.',
        on: {
          ...budget('retry_wait'),
          RUN: {
            target: 'running',
            actions: [{ type: 'armTimer', params: { timer: 'timeout' } }, { type: 'runAttempt' }],
          },
        },
      },
    },
    on: {
      FAIL: '#call.failed',
      CANCEL: '#call.cancelled',
      REQUEUE: { target: '#call.queued.waiting', actions: ['announceQueued'] },
    },
  } as const;
}

const startAttempt = [{ type: 'armTimer', params: { timer: 'timeout' } }, { type: 'runAttempt' }] as const;

export const callMachine = callSetup.createMachine({
  id: 'call',
  initial: 'queued',
  context: ({ input }) => ({ mode: input.mode, detached: input.detached ?? false }),
  states: {
    queued: {
      description: 'Validated, waiting for a concurrency slot (or for its approval).',
      initial: 'waiting',
      states: {
        waiting: {
          description: 'In the admission queue.',
          on: {
            ADMIT: {
              actions: callSetup.enqueueActions(({ check, enqueue }) => {
                if (!check('isDetached')) {
                  if (check('isBackgroundMode')) {
                    enqueue('detach');
                    enqueue({ type: 'answerBackgrounded', params: { reason: 'mode' } });
                  } else if (check('canPromote')) {
                    // The budget counts from the call, queue time included.
                    enqueue({ type: 'armTimer', params: { timer: 'budget' } });
                  }
                }
                enqueue('enqueue');
              }),
            },
            START: [
              { guard: 'isDetached', target: '#call.backgrounded', actions: startAttempt },
              { target: '#call.inline', actions: startAttempt },
            ],
            // A recovered call that never started is queued again, here.
            REQUEUE: { actions: ['announceQueued'] },
            HANDOVER: { guard: not('isDetached'), actions: handOver },
          },
        },
        awaiting_approval: {
          description: 'Waits out of the queue until it is approved or rejected.',
          on: {
            ADMIT: {
              guard: not('isDetached'),
              actions: ['detach', { type: 'answerBackgrounded', params: { reason: 'approval' } }],
            },
            APPROVE: {
              target: 'waiting',
              actions: [{ type: 'recordApproval', params: { decision: 'approved' } }, 'write', 'enqueue'],
            },
            // Before the ending's actions: the record ends with the decision in it.
            REJECT: {
              target: '#call.failed',
              actions: [{ type: 'recordApproval', params: { decision: 'rejected' } }],
            },
          },
        },
      },
      on: {
        // The caller is answered while the call waits; the call starts in the background.
        BUDGET: { guard: and(['canPromote', not('isDetached')]), actions: promote },
        FAIL: 'failed',
        CANCEL: 'cancelled',
      },
    },
    inline: {
      description: 'Running while the caller waits; the inline budget is ticking.',
      ...attemptStates('inline'),
    },
    backgrounded: {
      description: 'Still running; the caller has its "continuing in the background" reply.',
      ...attemptStates('backgrounded'),
    },
    succeeded: { type: 'final', entry: ending('succeeded') },
    failed: { type: 'final', entry: ending('failed') },
    cancelled: { type: 'final', entry: ending('cancelled') },
    timed_out: { type: 'final', entry: ending('timed_out') },
  },
});

export type CallMachine = typeof callMachine;
