import {
  type CallEvent,
  type CallRecord,
  type CallReply,
  endOf,
  isTerminalStatus,
  type ToolRegistry,
} from '@baton/contracts';
import type { Store } from '@baton/store';
import { filter, firstValueFrom, type Observable, Subject, takeUntil } from 'rxjs';
import type { Clock } from '../clock.js';
import { REPEATED_DETACH_GRACE_MS } from '../defaults.js';
import type { Failures } from '../log.js';
import type { Settings } from '../settings.js';
import { handedOverReply, notSavedReply, replyOf } from './replies.js';

export interface RepeatedCallDeps {
  settings: Pick<Settings, 'forTool'>;
  tools: Pick<ToolRegistry, 'get'>;
  store: Pick<Store, 'getCall' | 'send'>;
  /** A call's events: those stored, then those stored later (see Following). */
  follow: (callId: string) => Observable<CallEvent>;
  clock: Clock;
  failures: Pick<Failures, 'on' | 'report'>;
  /** Detaches a call that no process has claimed, as its caller's client does at the budget (see SharedClient). */
  detachUnclaimed: (callId: string) => Promise<boolean>;
  /** The caller is answered a detached call's end: what its session was told of it is given (the ledger's rule). */
  endGiven: (record: CallRecord) => Promise<unknown>;
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
  /** The calls whose callers wait here for their first answer. */
  readonly #waiting = new Map<string, number>();
  /** This process stops: the callers still waiting hear that their calls go on (see `handOver`). */
  readonly #handingOver = new Subject<void>();
  #handedOver = false;
  /** The calls handed over, as the store had them once their detachment was asked for. */
  readonly #handedOverAs = new Map<string, CallRecord>();
  /** Settles once the handover has read every call it handed over. */
  #handedOverRead: Promise<unknown> | undefined;

  constructor(private readonly deps: RepeatedCallDeps) {}

  async reply(record: CallRecord): Promise<CallReply> {
    const { settings, tools, store, follow, clock, failures, detachUnclaimed } = this.deps;
    const toolSettings = settings.forTool(tools.get(record.toolName));
    if (isTerminalStatus(record.status) && record.detached) {
      // Its end, to a caller who asks again: the notification of it is not given a second time.
      await this.deps.endGiven(record);
      return replyOf(record, toolSettings);
    }
    if (isTerminalStatus(record.status) || record.detached) return replyOf(record, toolSettings);
    const { callId } = record;
    if (this.#handedOver) return handedOverReply(record, toolSettings);
    let fallback: unknown;
    if (record.mode === 'auto') {
      const left = record.createdAt + toolSettings.inlineBudgetMs - clock.now();
      fallback = clock.setTimeout(() => {
        detachUnclaimed(callId).catch(failures.on('detach an unclaimed call', callId));
      }, Math.max(0, left) + REPEATED_DETACH_GRACE_MS);
    }
    this.#waiting.set(callId, (this.#waiting.get(callId) ?? 0) + 1);
    try {
      await firstValueFrom(
        follow(callId).pipe(
          filter((event) => endOf(event) !== undefined || event.type === 'backgrounded'),
          takeUntil(this.#handingOver),
        ),
        { defaultValue: undefined },
      );
    } finally {
      clock.clearTimeout(fallback);
      const left = (this.#waiting.get(callId) ?? 1) - 1;
      if (left === 0) this.#waiting.delete(callId);
      else this.#waiting.set(callId, left);
    }
    if (this.#handedOver) {
      // Woken by the handover, or by the detachment it asked for: what the store had then answers.
      await this.#handedOverRead;
      return handedOverReply(this.#handedOverAs.get(callId) ?? record, toolSettings);
    }
    return replyOf((await store.getCall(callId)) ?? record, toolSettings);
  }

  /**
   * This process stops, its store still open: each call a caller waits for here is detached, here
   * if no process has claimed it, else by a request through the store to whoever runs it, so that
   * its end becomes a notification. Its callers hear what the store has of it then: its end, that
   * it goes on (detached), or, not detached yet, to ask again. Nothing waits past this, and no
   * timer of theirs outlives the store. Returns how many calls were handed over.
   */
  async handOver(): Promise<number> {
    const { store, failures, detachUnclaimed } = this.deps;
    const callIds = [...this.#waiting.keys()];
    const detach = async (callId: string) => {
      if (!(await detachUnclaimed(callId))) await store.send?.({ type: 'control', callId, action: 'detach' });
      const stored = await store.getCall(callId);
      if (stored) this.#handedOverAs.set(callId, stored);
    };
    this.#handedOver = true;
    this.#handedOverRead = Promise.all(
      callIds.map((callId) => detach(callId).catch(failures.on('hand over a call', callId))),
    );
    await this.#handedOverRead;
    this.#handingOver.next();
    return callIds.length;
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
