import {
  type CallEvent,
  type CallRecord,
  type CallReply,
  endOf,
  isTerminalStatus,
  type ToolRegistry,
} from '@baton/contracts';
import type { Store } from '@baton/store';
import { filter, firstValueFrom, type Observable } from 'rxjs';
import type { Clock } from '../clock.js';
import { REPEATED_DETACH_GRACE_MS } from '../defaults.js';
import type { Failures } from '../log.js';
import type { Settings } from '../settings.js';
import { notSavedReply, replyOf } from './replies.js';

export interface RepeatedCallDeps {
  settings: Pick<Settings, 'forTool'>;
  tools: Pick<ToolRegistry, 'get'>;
  store: Pick<Store, 'getCall'>;
  /** A call's events: those stored, then those stored later (see Following). */
  follow: (callId: string) => Observable<CallEvent>;
  clock: Clock;
  failures: Pick<Failures, 'on' | 'report'>;
  /** Detaches a call that no process has claimed, as its caller's client does at the budget (see SharedClient). */
  detachUnclaimed: (callId: string) => Promise<boolean>;
}

/**
 * A request that repeats the id of a call made before, which this process does not run (another
 * process does, a load balancer's retry reached this one, or it ran before a restart): it is the
 * same call, and its caller hears what its first caller hears. Its end, if it has ended; that it
 * goes on in the background, if it does (its end is a notification then); else it waits, as the
 * first caller does, for the end or for the call to go to the background. An auto call that no
 * process has claimed by the end of its budget is detached here, as its first caller's process
 * would have (that process may be gone): a caller is never told `backgrounded` of a call whose
 * end would not be told.
 */
export class RepeatedCalls {
  constructor(private readonly deps: RepeatedCallDeps) {}

  async reply(record: CallRecord): Promise<CallReply> {
    const { settings, tools, store, follow, clock, failures, detachUnclaimed } = this.deps;
    const toolSettings = settings.forTool(tools.get(record.toolName));
    if (isTerminalStatus(record.status) || record.detached) return replyOf(record, toolSettings);
    const { callId } = record;
    let fallback: unknown;
    if (record.mode === 'auto') {
      const left = record.createdAt + toolSettings.inlineBudgetMs - clock.now();
      fallback = clock.setTimeout(() => {
        detachUnclaimed(callId).catch(failures.on('detach an unclaimed call', callId));
      }, Math.max(0, left) + REPEATED_DETACH_GRACE_MS);
    }
    try {
      await firstValueFrom(
        follow(callId).pipe(filter((event) => endOf(event) !== undefined || event.type === 'backgrounded')),
        { defaultValue: undefined },
      );
    } finally {
      clock.clearTimeout(fallback);
    }
    return replyOf((await store.getCall(callId)) ?? record, toolSettings);
  }

  /**
   * After the store refused the write that made a call: the call another process made under the
   * same id, if that is why, as a repeated call; else the refusal: not kept (`persistence_failed`).
   */
  async afterRefusal(callId: string, error: unknown): Promise<CallReply> {
    const stored = await this.madeElsewhere(callId, error);
    return stored ? this.reply(stored) : notSavedReply(callId)(error);
  }

  /**
   * The call another process made under this id, when that is why the store refused the write
   * that made it here; else undefined, and the refusal is reported.
   */
  async madeElsewhere(callId: string, error: unknown): Promise<CallRecord | undefined> {
    const { store, failures } = this.deps;
    const stored = await store.getCall(callId).catch((readError: unknown) => {
      failures.report('read a call made elsewhere', readError, callId);
      return undefined;
    });
    if (!stored) failures.report('write', error, callId);
    return stored;
  }
}
