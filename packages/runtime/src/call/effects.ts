import type { CallTimer } from '@baton/machine';
import type { Clock } from '../clock.js';
import type { Answers } from './answers.js';
import type { Attempts } from './attempts.js';
import type { Effects, Send } from './driver.js';
import type { CallEnding } from './ending.js';
import type { LiveCall } from './live-call.js';
import type { CallNotifications } from './notifications.js';
import type { Slots } from './slots.js';
import type { Timers } from './timers.js';
import type { CallUpdates } from './updates.js';
import type { CallWrites } from './writes.js';

export interface EffectModules {
  answers: Answers;
  attempts: Attempts;
  ending: CallEnding;
  notifications: CallNotifications;
  slots: Slots;
  timers: Timers;
  writes: CallWrites;
  send: Send;
  clock: Clock;
  updates: Pick<CallUpdates, 'remind' | 'promoted'>;
}

/** What each of the machine's timers sends when it fires. */
const FIRES = { budget: 'BUDGET', timeout: 'TIMEOUT', retry: 'RUN' } as const;

/**
 * How long each timer of a call waits: the budget counts from the call, queue time included (the
 * caller never waits longer than it); the timeout bounds each attempt; the retry waits its backoff.
 */
function delayOf(timer: CallTimer, call: LiveCall, modules: EffectModules): number | undefined {
  if (timer === 'budget') return call.settings.inlineBudgetMs - (modules.clock.now() - call.record.createdAt);
  if (timer === 'timeout') return call.settings.timeoutMs;
  return modules.attempts.delayOf(call);
}

/** The runtime's effect for every action the call machine names: the table the driver executes. */
export function callEffects(modules: EffectModules): Effects {
  const { answers, attempts, ending, notifications, slots, timers, writes, send, updates } = modules;
  return {
    answerBackgrounded: (call, { params: { reason } }, _, from, to) => {
      answers.backgrounded(call, reason, from, to);
      updates.promoted(call);
    },
    armTimer: (call, { params: { timer } }) => {
      const ms = delayOf(timer, call, modules);
      if (ms === undefined) return;
      const fire = () => send(call, { type: FIRES[timer] });
      // A budget already spent (a call that waited, or one taken up late) promotes the call at once.
      if (timer === 'budget' && ms <= 0) fire();
      else timers.armFor(call, timer, ms, fire);
    },
    clearTimer: (call, { params: { timer } }) => timers.clearFor(call, timer),
    clearTimers: (call) => timers.clearAll(call),
    enqueue: (call) => {
      slots.enqueue(call);
      updates.remind(call);
    },
    runAttempt: (call, _, __, from, to) => attempts.run(call, from, to),
    announceRetry: (call, _, event, from, to) => attempts.announceRetry(call, event, from, to),
    announceQueued: (call, _, __, from, to) => {
      writes.emit(call, { type: 'queued', mode: call.record.mode, from: from.status, to: to.status });
      writes.save(call);
    },
    recordApproval: (call, { params: { decision } }) => {
      call.record.approval = decision;
    },
    write: (call) => writes.save(call),
    abort: (call) => ending.abort(call),
    recordOutcome: (call, { params: { status } }, event, from) =>
      ending.recordOutcome(call, status, event, from),
    notify: (call, { params: { status } }) => notifications.notify(call, status),
    keepArtifacts: (call, { params: { status } }) => notifications.keepArtifacts(call, status),
    writeEnd: (call) => ending.writeEnd(call),
    answerCaller: (call) => answers.ended(call),
    failBatch: (call) => ending.failBatch(call),
    releaseSlot: (call) => slots.release(call),
  };
}
