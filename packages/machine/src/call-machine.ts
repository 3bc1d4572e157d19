import type { ExecutionMode } from '@baton/contracts';
import { assign, setup } from 'xstate';

export interface CallMachineInput {
  mode: ExecutionMode;
  /** A call recovered after a crash keeps whether its caller was already answered. Default: background mode. */
  detached?: boolean;
}

export interface CallMachineContext {
  mode: ExecutionMode;
  /** The caller already has its `backgrounded` reply; from here on the result goes to a notification. */
  detached: boolean;
}

/**
 * What the runtime tells the machine. The runtime owns execution and time (it runs the tool and
 * arms the timers); the machine decides what each of these means in each state. Keeping the
 * actor free of invoked children and timers is what keeps one actor per call affordable.
 */
export type CallMachineEvent =
  | { type: 'START' }
  | { type: 'BUDGET' }
  | { type: 'DONE' }
  | { type: 'FAIL' }
  | { type: 'CANCEL' }
  | { type: 'TIMEOUT' }
  /** A queued call is refused before it runs (its approval was refused, or it cannot run any more). */
  | { type: 'REJECT' };

export const callMachine = setup({
  types: {
    input: {} as CallMachineInput,
    context: {} as CallMachineContext,
    events: {} as CallMachineEvent,
  },
  guards: {
    isDetached: ({ context }) => context.detached,
    canPromote: ({ context }) => context.mode === 'auto',
  },
  actions: {
    detach: assign({ detached: true }),
  },
}).createMachine({
  id: 'call',
  initial: 'queued',
  context: ({ input }) => ({ mode: input.mode, detached: input.detached ?? input.mode === 'background' }),
  states: {
    queued: {
      description: 'Validated, waiting for a concurrency slot.',
      on: {
        START: [{ guard: 'isDetached', target: 'backgrounded' }, { target: 'inline' }],
        // The budget counts from the call, queue time included: the caller is answered while it waits.
        BUDGET: { guard: 'canPromote', actions: 'detach' },
        CANCEL: 'cancelled',
        REJECT: 'failed',
      },
    },
    inline: {
      description: 'Running while the caller waits; the inline budget is ticking.',
      on: {
        BUDGET: { guard: 'canPromote', target: 'backgrounded', actions: 'detach' },
        DONE: 'succeeded',
        FAIL: 'failed',
        CANCEL: 'cancelled',
        TIMEOUT: 'timed_out',
      },
    },
    backgrounded: {
      description: 'Still running; the caller has its "continuing in the background" reply.',
      on: {
        DONE: 'succeeded',
        FAIL: 'failed',
        CANCEL: 'cancelled',
        TIMEOUT: 'timed_out',
      },
    },
    succeeded: { type: 'final' },
    failed: { type: 'final' },
    cancelled: { type: 'final' },
    timed_out: { type: 'final' },
  },
});

export type CallMachine = typeof callMachine;
