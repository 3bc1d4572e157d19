import { type CallReply, isTerminalStatus } from '@baton/contracts';
import { formattedCall, replyOf } from './call/replies.js';
import type { Clock } from './clock.js';
import { acknowledgeGivenEnd, endStored } from './ledger/given.js';
import type { WaitOptions } from './options.js';
import type { Runtime } from './runtime-api.js';
import type { Settings } from './settings.js';

export interface WaitDeps {
  runtime: Pick<Runtime, 'get' | 'follow' | 'notifications' | 'tools'>;
  settings: Pick<Settings, 'forTool'>;
  clock: Clock;
}

/** Resolves after `ms` on the runtime's clock, or when `signal` aborts. */
function elapsed(clock: Clock, ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = clock.setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
    function done() {
      clock.clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
  });
}

/**
 * `runtime.wait`: the call's reply once it ends, or, at the timeout (the tool's inline budget by
 * default), that it goes on. The waiter has the result then: the call's notification is
 * acknowledged, so its session is not told twice.
 */
export async function waitForCall(
  { runtime, settings, clock }: WaitDeps,
  callId: string,
  { timeoutMs, signal }: WaitOptions = {},
): Promise<CallReply | undefined> {
  const record = await runtime.get(callId);
  if (!record) return undefined;
  const toolSettings = settings.forTool(runtime.tools.get(record.toolName));
  const waitMs = timeoutMs ?? toolSettings.inlineBudgetMs;
  if (!isTerminalStatus(record.status)) {
    // Whichever comes first stops the other: neither the follower nor the timer outlives the wait.
    const stop = new AbortController();
    const ended = endStored(runtime, record, stop.signal);
    const bound = elapsed(clock, waitMs, signal ? AbortSignal.any([stop.signal, signal]) : stop.signal);
    await Promise.race([ended, bound]);
    stop.abort();
  }
  const now = (await runtime.get(callId)) ?? record;
  // Still going: the caller is told so in the background continuation's words, for as long as it waited.
  if (!isTerminalStatus(now.status)) {
    return {
      callId,
      status: 'backgrounded',
      output: toolSettings.formatter.running(formattedCall(now, toolSettings), waitMs),
    };
  }
  // Its end, and any update of it not yet given: the waiter has what replaces them.
  await acknowledgeGivenEnd(runtime.notifications, now);
  return replyOf(now, toolSettings);
}
