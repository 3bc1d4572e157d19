import { type AnyTool, type CallRecord, type CallReply, isTerminalStatus } from '@baton/contracts';
import type { Store } from '@baton/store';
import { refusalHandledElsewhere } from '../call/ending.js';
import { failedReply } from '../call/prepare-inputs.js';
import type { RepeatedCalls } from '../call/repeated.js';
import { askAgainReply, type BackgroundReason, backgroundedReply, replyOf } from '../call/replies.js';
import type { Timers } from '../call/timers.js';
import type { CallWrites } from '../call/writes.js';
import { changeableCopy } from '../changeable-copy.js';
import type { Clock } from '../clock.js';
import { HANDOVER_REPLY_WAIT_MS } from '../defaults.js';
import type { Following } from '../following.js';
import type { Failures } from '../log.js';
import { overloadedMessage } from '../messages.js';
import { afterQueuedEvent, queuedEventOf } from '../queued-event.js';
import type { Settings, ToolSettings } from '../settings.js';
import type { WriteBatcher } from '../write-batcher.js';
import { RemoteReplies } from './remote-replies.js';

export interface ClientDeps {
  settings: Pick<Settings, 'forTool' | 'instanceId' | 'limits' | 'claimWaitMs' | 'tenantOf'>;
  writes: Pick<CallWrites, 'stamp'>;
  writer: Pick<WriteBatcher, 'add' | 'recordConfirmed' | 'recordNew'>;
  /** The same id sent to another process at the same time: that process made the call (see RepeatedCalls). */
  repeated: Pick<RepeatedCalls, 'afterRefusal'>;
  store: Pick<Store, 'getCalls' | 'claimQueued' | 'listen' | 'send' | 'heldBy'>;
  following: Pick<Following, 'ticks' | 'heardOrPolled'>;
  timers: Timers;
  clock: Clock;
  failures: Failures;
}

/**
 * The client role on a store that processes share: a call is stored with no owner for a worker to
 * claim, and its reply comes back through the store: `backgrounded` when a worker's budget passes
 * (or at once for background mode or an approval), else the end.
 */
export class SharedClient {
  readonly #replies: RemoteReplies;
  /** The client stops: a caller still waiting hears that its call goes on without it. */
  #handingOver = false;
  /** The calls this client is taking a moment to detach (see `#detachUnclaimed`). */
  readonly #detaching = new Set<string>();
  /**
   * The replies of the calls submitted here and not yet answered, by id: the same new id sent again
   * meanwhile (a retry, or a load balancer's second try) is the same call, and hears its reply.
   */
  readonly #submitted = new Map<string, Promise<CallReply>>();
  /** The calls waited for here and not yet answered, in all and by tenant (see `#overloaded`). */
  #waitedFor = 0;
  readonly #waitedForBy = new Map<string, number>();

  constructor(private readonly deps: ClientDeps) {
    this.#replies = new RemoteReplies({ ...deps, instanceId: deps.settings.instanceId });
  }

  submit(tool: AnyTool, given: CallRecord): Promise<CallReply> {
    const { callId } = given;
    const submitted = this.#submitted.get(callId);
    if (submitted) return submitted;
    const reply = this.#submit(tool, given);
    this.#submitted.set(callId, reply);
    const forget = () => this.#submitted.delete(callId);
    reply.then(forget, forget);
    return reply;
  }

  #submit(tool: AnyTool, given: CallRecord): Promise<CallReply> {
    const { writes, writer, settings } = this.deps;
    const { ownerId: _, ...unowned } = given;
    const approval = unowned.approval === 'pending';
    // What the call machine decides at admission, for a call that this process does not run.
    const detached = approval || unowned.mode === 'background';
    if (!detached) {
      const refusal = this.#overloaded(given.callId, given.sessionId);
      if (refusal) return Promise.resolve(refusal);
    }
    // A call answered at once is not waited for: no process need tell this one of it.
    const record: CallRecord = changeableCopy(
      unowned,
      detached ? { detached } : { detached, replyTo: settings.instanceId },
    );
    const reason = approval ? ('approval' as const) : ('mode' as const);
    // A call its caller waits for is stored without events: the worker that claims it stores its
    // `queued` event (see queuedEventOf). One answered at once has it, and `backgrounded`, now.
    if (record.detached) {
      writer.add('events', queuedEventOf(record));
      const backgrounded = {
        type: 'backgrounded' as const,
        reason,
        afterMs: 0,
        from: 'queued' as const,
        to: 'queued' as const,
      };
      writer.add('events', writes.stamp(backgrounded, record, 2));
    }
    const reply = record.detached ? backgroundedReply(record, settings.forTool(tool), reason) : undefined;
    if (reply) record.acknowledgement = reply.output;
    const written = writer.recordNew(record);
    if (reply) {
      return written.then(
        () => reply,
        (error: unknown) => this.deps.repeated.afterRefusal(record.callId, error),
      );
    }
    const tenant = settings.tenantOf?.(record.sessionId);
    this.#waited(tenant, 1);
    const waited = this.#remoteReply(record, tool, written);
    const answered = () => this.#waited(tenant, -1);
    waited.then(answered, answered);
    return waited;
  }

  /** How many calls waited for here a worker has yet to answer: at the limit, a new one is refused. */
  get waitingForWorkers(): number {
    return this.#waitedFor;
  }

  /** Past `limits.waitingForWorkers`, in all or for the call's tenant: refused, before anything is kept. */
  #overloaded(callId: string, sessionId: string): CallReply | undefined {
    const { limits, tenantOf } = this.deps.settings;
    if (this.#waitedFor >= limits.waitingForWorkers) {
      return overloadedReply(callId, overloadedMessage(limits.waitingForWorkers, undefined));
    }
    const tenant = tenantOf?.(sessionId);
    if (tenant === undefined) return undefined;
    const perTenant = limits.waitingForWorkersPerTenant;
    return (this.#waitedForBy.get(tenant) ?? 0) >= perTenant
      ? overloadedReply(callId, overloadedMessage(perTenant, tenant))
      : undefined;
  }

  #waited(tenant: string | undefined, change: 1 | -1): void {
    this.#waitedFor += change;
    if (tenant === undefined) return;
    const count = (this.#waitedForBy.get(tenant) ?? 0) + change;
    if (count === 0) this.#waitedForBy.delete(tenant);
    else this.#waitedForBy.set(tenant, count);
  }

  /**
   * Waits in the store for the first thing the caller must hear: that the call was detached
   * (`backgrounded`), or its end. It waits before the call is stored, so nothing a worker stores
   * can come before it; its record is read, with those of the other calls told of in the same
   * turn, only when the store tells of the call's events (see RemoteReplies).
   * A call that no worker has claimed by its deadline (see `#withinDeadline`) is detached here, as
   * a runtime detaches a call that waits in its queue.
   */
  async #remoteReply(record: CallRecord, tool: AnyTool, written: Promise<void>): Promise<CallReply> {
    const settings = this.deps.settings.forTool(tool);
    const answered = this.#replies.wait(record.callId);
    try {
      await written;
    } catch (error) {
      this.#replies.forget(record.callId);
      return this.deps.repeated.afterRefusal(record.callId, error);
    }
    const answer = await this.#withinDeadline(record, settings, answered);
    const reason = this.#handingOver ? 'handover' : 'budget';
    // Not detached by the time this client stopped (its worker cut off, say): its end would go untold.
    if (!answer) return this.#handingOver ? askAgainReply(record.callId) : replyOf(record, settings);
    // Detached, the call's end is a notification (its worker's budget passed before it ended):
    // its caller hears that it went on, even when it has ended by the time it is read.
    return isTerminalStatus(answer.status) && !answer.detached
      ? replyOf(answer, settings)
      : backgroundedReply(record, settings, reason);
  }

  /**
   * A call's answer, a deadline armed meanwhile: an auto call's budget, and for every call its wait
   * for a claim (`claimWaitMs`), whichever comes first. Past it a call no worker has claimed goes to
   * the background; one a worker holds is that worker's to detach, at its own budget.
   */
  #withinDeadline<T>(record: CallRecord, settings: ToolSettings, answered: Promise<T>): Promise<T> {
    const { timers, clock, failures } = this.deps;
    const { callId } = record;
    const { claimWaitMs } = this.deps.settings;
    const deadlineMs = record.mode === 'auto' ? Math.min(settings.inlineBudgetMs, claimWaitMs) : claimWaitMs;
    let budget: unknown = timers.arm(
      () => {
        budget = undefined;
        const { output } = backgroundedReply(record, settings, 'budget');
        this.#detachUnclaimed(callId, 'budget', output).catch(
          failures.on('detach an unclaimed call', callId),
        );
      },
      deadlineMs - (clock.now() - record.createdAt),
    );
    return answered.finally(() => {
      budget = timers.clear(budget);
    });
  }

  /**
   * The budget of a client's call passed while no worker had it: the client takes it a moment,
   * marks it detached (its end will be a notification) with the `backgrounded` event its caller
   * hears, and gives it back. A call a worker holds is detached by that worker's own budget.
   */
  /** Detaches a call no process has claimed (see `#detachUnclaimed`): false when one has. */
  detachUnclaimed(callId: string): Promise<boolean> {
    return this.#detachUnclaimed(callId, 'budget');
  }

  async #detachUnclaimed(
    callId: string,
    reason: BackgroundReason,
    acknowledgement?: unknown,
  ): Promise<boolean> {
    this.#detaching.add(callId);
    try {
      return await this.#detach(callId, reason, acknowledgement);
    } finally {
      this.#detaching.delete(callId);
    }
  }

  async #detach(callId: string, reason: BackgroundReason, acknowledgement: unknown): Promise<boolean> {
    const { store, writes, writer, clock, settings } = this.deps;
    const [unclaimed] = await store.claimQueued(settings.instanceId, 1, callId);
    if (!unclaimed) return false;
    const { lastSeq } = unclaimed;
    const { ownerId: _, ...released } = unclaimed.record;
    const record: CallRecord = changeableCopy(
      released,
      acknowledgement === undefined ? { detached: true } : { detached: true, acknowledgement },
    );
    // Never claimed before: its `queued` event is stored with this one, as a worker's would be.
    const seq = afterQueuedEvent(writer, record, lastSeq);
    const afterMs = clock.now() - record.createdAt;
    const event = {
      type: 'backgrounded' as const,
      reason,
      afterMs,
      from: 'queued' as const,
      to: 'queued' as const,
    };
    writer.add('events', writes.stamp(event, record, seq + 1));
    // A refusal ends nothing here: the call stays the workers' to run, and the caller is not told twice.
    await writer
      .recordConfirmed(record)
      .then(() => this.#replies.changedHere(callId), refusalHandledElsewhere);
    return true;
  }

  /**
   * After an outage: a call this client took to detach, whose claim's answer was lost, is still
   * held by it in the store, where no worker would claim it. Each such call goes back to the
   * workers, as it was.
   */
  async giveBackHeld(): Promise<void> {
    const { store, writer, settings } = this.deps;
    if (!store.heldBy) return;
    for (const { record } of await store.heldBy(settings.instanceId)) {
      if (this.#detaching.has(record.callId)) continue;
      const { ownerId: _, ...released } = record;
      await writer.recordConfirmed(released);
    }
  }

  /**
   * The client stops (a deploy): its callers may wait `drainMs` for their calls' ends; each call
   * still waited for then is detached, by the worker that runs it (a request through the store,
   * which whoever takes the call up reads too) or here if none has claimed it, so that its end
   * becomes a notification, and its caller hears that it goes on. Nothing is cancelled. Returns
   * how many were handed over.
   */
  async handOver(drainMs: number): Promise<number> {
    const { store, failures } = this.deps;
    await this.#within(this.#replies.idle(), drainMs);
    const callIds = this.#replies.waiting();
    if (callIds.length === 0) return 0;
    this.#handingOver = true;
    const detach = async (callId: string) => {
      if (await this.#detachUnclaimed(callId, 'handover')) return;
      await store.send?.({ type: 'control', callId, action: 'detach' });
    };
    await Promise.all(callIds.map((callId) => detach(callId).catch(failures.on('hand over a call', callId))));
    // The detachments come back as replies; a caller whose reply is late is answered anyway.
    await this.#within(this.#replies.idle(), HANDOVER_REPLY_WAIT_MS);
    this.#replies.settleAll();
    return callIds.length;
  }

  /** Resolves when `done` does, or after `ms` on the runtime's clock. */
  #within(done: Promise<void>, ms: number): Promise<void> {
    const { clock } = this.deps;
    if (ms <= 0) return Promise.resolve();
    let timer: unknown;
    const passed = new Promise<void>((resolve) => {
      timer = clock.setTimeout(resolve, ms);
    });
    return Promise.race([done, passed]).finally(() => clock.clearTimeout(timer));
  }

  /** Listens for the replies of the calls it will submit, as a client runtime starts (see RemoteReplies). */
  listen(): Promise<void> {
    return this.#replies.listen();
  }

  /** Stops listening for replies (the runtime closes). */
  close(): void {
    this.#replies.close();
  }
}

/** The reply to a call a client refuses as it holds all it may: nothing of it is kept. */
function overloadedReply(callId: string, message: string): CallReply {
  return failedReply(callId, { code: 'overloaded', message });
}
