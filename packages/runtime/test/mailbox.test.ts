import { type CallRecord, defaultResultFormatter, defineTool } from '@baton/contracts';
import {
  type CallAction,
  type CallActionType,
  type CallMachineEvent,
  type CallStep,
  callState,
} from '@baton/machine';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { CallDriver, type DriverEvent, type Effect, type Effects } from '../src/call/driver.js';
import { LiveCall } from '../src/call/live-call.js';

const tool = defineTool({ name: 'work', description: 'w', input: z.object({}), execute: () => 'ok' });

/** A call of an `auto` tool that was just made, whose actor may hand its driver its actions in another order. */
function newCall(order: (actions: readonly CallAction[]) => readonly CallAction[]) {
  const record: CallRecord = {
    callId: 'c1',
    sessionId: 's',
    toolName: 'work',
    args: {},
    status: 'queued',
    mode: 'auto',
    detached: false,
    attempt: 0,
    createdAt: 0,
    outputTail: '',
  };
  const call = new LiveCall({
    record,
    tool,
    args: {},
    state: callState('queued.waiting', 'auto', false),
    settings: {
      inlineBudgetMs: 0,
      timeoutMs: undefined,
      retry: undefined,
      maxAttempts: 1,
      recoveryAttempts: 1,
      formatter: defaultResultFormatter,
      secretArgs: [],
    },
  });
  const send = call.send.bind(call);
  call.send = (event: CallMachineEvent): CallStep => {
    const step = send(event);
    return { state: step.state, actions: order(step.actions) };
  };
  return call;
}

const ACTIONS: CallActionType[] = [
  'answerBackgrounded',
  'armTimer',
  'clearTimer',
  'clearTimers',
  'enqueue',
  'runAttempt',
  'announceRetry',
  'announceQueued',
  'recordApproval',
  'write',
  'abort',
  'recordOutcome',
  'notify',
  'keepArtifacts',
  'writeEnd',
  'answerCaller',
  'failBatch',
  'releaseSlot',
];

/**
 * A driver whose effects send what the runtime's do, at once: the queue has a free slot (`enqueue`
 * starts the call), the budget was spent while the call waited (`armTimer` sends BUDGET), and the
 * tool returns at once (`runAttempt` sends DONE). Each action writes down the state it sees.
 */
function drive(order: (actions: readonly CallAction[]) => readonly CallAction[]) {
  const driver = new CallDriver();
  const seen: string[] = [];
  const call = newCall(order);
  const { send } = driver;
  const sends: Partial<Record<CallActionType, DriverEvent>> = {
    enqueue: { type: 'START' },
    runAttempt: { type: 'DONE', outcome: { ok: true, value: 'ok' } },
  };
  const effects = Object.fromEntries(
    ACTIONS.map((type): [CallActionType, Effect] => [
      type,
      (target, action, event, _from, to) => {
        seen.push(`${event.type}: ${action.type} in ${target.state.path}`);
        // The state each action of a transition sees is that transition's: nothing ran in between.
        expect(target.state).toBe(to);
        const next =
          action.type === 'armTimer' && action.params.timer === 'budget'
            ? { type: 'BUDGET' as const }
            : sends[type];
        if (next) send(target, next);
      },
    ]),
  ) as Effects;
  driver.use(effects);
  send(call, { type: 'ADMIT' });
  return { call, seen };
}

/** What the runtime would have done, whatever the order: each effect, as many times, and where the call ends. */
function observable({ call, seen }: { call: LiveCall; seen: readonly string[] }) {
  return { effects: seen.map((line) => line.split(': ')[1]?.split(' in ')[0]).sort(), state: call.state };
}

describe("the call driver's mailbox: one event at a time, to completion", () => {
  it('handles an event an action sends once the rest of its list has run, in the order sent', () => {
    const { call, seen } = drive((actions) => actions);
    expect(seen).toEqual([
      // ADMIT's list runs whole: its budget was spent and a slot is free, but BUDGET and START wait.
      'ADMIT: armTimer in queued.waiting',
      'ADMIT: enqueue in queued.waiting',
      // Then what it sent, in order: the budget passed while it was queued, then it starts.
      'BUDGET: answerBackgrounded in queued.waiting',
      'START: armTimer in backgrounded.running',
      'START: runAttempt in backgrounded.running',
      // The tool returned at once: its DONE waited for START's list to end.
      'DONE: clearTimers in succeeded',
      'DONE: recordOutcome in succeeded',
      'DONE: notify in succeeded',
      'DONE: keepArtifacts in succeeded',
      'DONE: writeEnd in succeeded',
      'DONE: answerCaller in succeeded',
      'DONE: releaseSlot in succeeded',
    ]);
    expect(call.record.status).toBe('succeeded');
  });

  it('does the same, and ends the same, whatever the order of the actions in each list', () => {
    const inOrder = observable(drive((actions) => actions));
    expect(observable(drive((actions) => [...actions].reverse()))).toEqual(inOrder);
    expect(observable(drive((actions) => [...actions.slice(1), ...actions.slice(0, 1)]))).toEqual(inOrder);
    expect(inOrder.state).toMatchObject({ path: 'succeeded', detached: true });
  });

  it('handles the rest of what was sent when an action throws, then throws its error', () => {
    const driver = new CallDriver();
    const call = newCall((actions) => actions);
    const ran: string[] = [];
    const effects = Object.fromEntries(
      ACTIONS.map((type): [CallActionType, Effect] => [
        type,
        (target, action, event) => {
          ran.push(`${event.type}: ${action.type}`);
          if (action.type === 'enqueue') driver.send(target, { type: 'START' });
          if (action.type === 'armTimer' && event.type === 'ADMIT') throw new Error('a broken effect');
        },
      ]),
    ) as Effects;
    driver.use(effects);
    expect(() => driver.send(call, { type: 'ADMIT' })).toThrow('a broken effect');
    // The list stopped where its action threw; what was sent before is handled.
    expect(ran).toEqual(['ADMIT: armTimer']);
    expect(call.state.path).toBe('queued.waiting');
    driver.send(call, { type: 'START' });
    expect(call.state.path).toBe('inline.running');
  });
});
