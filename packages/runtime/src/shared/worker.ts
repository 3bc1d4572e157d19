import { type CallRecord, isTerminalStatus, type ToolRegistry } from '@baton/contracts';
import type { CallControl, ClaimedCall, Store, StoreNotice } from '@baton/store';
import type { Send } from '../call/driver.js';
import type { LiveCall } from '../call/live-call.js';
import type { CallRegistry } from '../call/registry.js';
import type { Slots } from '../call/slots.js';
import type { Timers } from '../call/timers.js';
import { changeableCopy } from '../changeable-copy.js';
import { CLAIM_BATCH_MAX } from '../defaults.js';
import type { Following } from '../following.js';
import type { Failures } from '../log.js';
import { afterQueuedEvent } from '../queued-event.js';
import type { Settings } from '../settings.js';
import type { WriteBatcher } from '../write-batcher.js';

export interface WorkerDeps {
  settings: Pick<Settings, 'instanceId' | 'role' | 'limits'>;
  tools: ToolRegistry;
  store: Pick<Store, 'claimQueued' | 'getCall' | 'send' | 'requestsFor'>;
  registry: CallRegistry;
  slots: Slots;
  timers: Pick<Timers, 'clearAll'>;
  writer: Pick<WriteBatcher, 'add' | 'record' | 'recordConfirmed'>;
  send: Send;
  failures: Failures;
  following: Pick<Following, 'heardOrPolled'>;
  closed: () => boolean;
  /** Carries out a request for a call run here (the runtime's cancel, approve, reject). */
  control: (control: CallControl) => Promise<boolean>;
  /** Takes up a claimed call, and keeps trying if that fails (see recovery). */
  takeUp: (callId: string, takeUp: () => Promise<unknown>) => Promise<void>;
  /** Ends a claimed call that cannot run here (its tool is gone, its arguments no longer fit). */
  recover: (orphan: CallRecord) => Promise<void>;
  /** Stops a stale copy of a call this instance lost. */
  drop: (call: LiveCall) => void;
}

/**
 * The worker role on a store that processes share: it claims the unowned calls that clients
 * submit, as many as it has room for, runs them, and hands requests for them (cancel, approve,
 * reject) to whichever process runs them.
 */
export class SharedWorker {
  #claiming: Promise<void> | undefined;
  #claimAgain = false;
  /** Set by a notice of a queued call or a full claim; cleared by a claim that found fewer than it asked. */
  #workMayWait = false;
  #listened: () => void = () => {};
  readonly #heardListening = new Promise<void>((resolve) => {
    this.#listened = resolve;
  });
  #listening: Promise<void> | undefined;
  /** Set once `listening()` resolves: no call is claimed before. */
  #hearing = false;
  /**
   * Requests heard, while a claim was out, for calls not here: the claim may be taking them (its
   * answer, and the notice of a request sent after it began, can come in either order).
   */
  #heardWhileClaiming: CallControl[] = [];

  constructor(private readonly deps: WorkerDeps) {}

  /**
   * Resolves once the store says it listens: requests for the calls this worker takes (a cancel)
   * reach it only as notices, so it takes none before (a runtime is ready after). Or after a poll
   * interval, if its store never says so (its LISTEN connection cannot be made), and at once on a
   * store that is not shared.
   */
  listening(): Promise<void> {
    this.#listening ??= this.deps.following.heardOrPolled(this.#heardListening).then(() => {
      this.#hearing = true;
    });
    return this.#listening;
  }

  /**
   * What a shared store tells this process: calls to claim (or that some may have gone untold),
   * requests for the calls run here.
   */
  hear(notice: StoreNotice): void {
    const { settings, registry } = this.deps;
    if (notice.type === 'listening') {
      this.#listened();
      // What was sent while this process did not listen (its LISTEN connection was down).
      void this.catchUp();
    }
    if (notice.type === 'queued' || notice.type === 'listening') {
      if (settings.role !== 'client') {
        this.#workMayWait = true;
        void this.claim();
      }
    } else if (notice.type === 'control') {
      if (registry.has(notice.callId)) this.#carryOut(notice);
      else if (this.#claiming) this.#heardWhileClaiming.push(notice);
    }
  }

  /**
   * Carries out the requests the store keeps for these calls (by default every call here) that
   * run here: those sent while this process did not listen, or before it took the calls over. One
   * heard already is carried out again, which changes nothing: each asks for a change of state
   * that a call makes once (a call cancelled, approved, rejected or detached is asked in vain).
   */
  async catchUp(callIds?: readonly string[]): Promise<void> {
    const { store, registry, failures } = this.deps;
    const ids = callIds ?? registry.all().map((call) => call.record.callId);
    if (!store.requestsFor || ids.length === 0) return;
    try {
      this.#carryOutHere(await store.requestsFor(ids));
    } catch (error) {
      failures.report('read the requests for calls run here', error);
    }
  }

  #carryOut(request: CallControl): void {
    this.deps.control(request).catch(this.deps.failures.on(request.action, request.callId));
  }

  /** Carries out, in order, the requests for calls here; returns the others. */
  #carryOutHere(requests: readonly CallControl[]): CallControl[] {
    const elsewhere: CallControl[] = [];
    for (const request of requests) {
      if (this.deps.registry.has(request.callId)) this.#carryOut(request);
      else elsewhere.push(request);
    }
    return elsewhere;
  }

  /** A slot was freed: the next calls that wait in the store are claimed, a batch at a time. */
  freed(): void {
    if (this.#workMayWait && this.#room() >= this.deps.settings.limits.concurrency / 2) void this.claim();
  }

  /**
   * How many more calls a worker may take: a slot for each, and as many again waiting here, so
   * that freed slots start the next call at once and claims go in batches, not one per call.
   */
  #room(): number {
    const { slots, settings } = this.deps;
    return 2 * settings.limits.concurrency - slots.running - slots.waiting;
  }

  /**
   * Takes the unowned calls there is room for, until there are none or this worker is full; none
   * before it hears the requests for them (see `listening`).
   */
  claim(): Promise<void> {
    if (!this.#hearing) return Promise.resolve();
    if (this.#claiming) {
      this.#claimAgain = true;
      return this.#claiming;
    }
    const { store, settings, takeUp, closed, failures } = this.deps;
    this.#claiming = (async () => {
      do {
        this.#claimAgain = false;
        for (;;) {
          const room = this.#room();
          if (room <= 0 || closed()) break;
          const asked = Math.min(room, CLAIM_BATCH_MAX);
          const claimed = await store.claimQueued(settings.instanceId, asked);
          // A claim that comes back once this worker closes: its calls go back, as the waiting ones did.
          if (closed()) {
            for (const { record } of claimed) this.#giveBack(record);
            break;
          }
          // One after another: they join the queue in the order they were submitted.
          for (const call of claimed) await takeUp(call.record.callId, () => this.adopt(call, true));
          // The requests stored before this claim (a cancel to a worker that died, say), then those
          // heard while it was out; those for calls not taken wait for the next answer of this claim.
          this.#heardWhileClaiming = this.#carryOutHere([
            ...claimed.flatMap((call) => call.requests ?? []),
            ...this.#heardWhileClaiming,
          ]);
          this.#workMayWait = claimed.length === asked;
          if (!this.#workMayWait) break;
        }
      } while (this.#claimAgain && !closed());
    })()
      // A claim that fails (the database is away) is tried again at the next poll or notice.
      .catch(failures.on('claim'))
      .finally(() => {
        this.#claiming = undefined;
        this.#heardWhileClaiming = [];
      });
    return this.#claiming;
  }

  /**
   * Runs `work` while no claim is out, and starts none until it is done (one asked for meanwhile
   * runs after): what `work` takes up cannot come back in a claim's answer too.
   */
  async exclusive(work: () => Promise<void>): Promise<void> {
    while (this.#claiming) await this.#claiming;
    const running = work();
    const held = running.catch(() => {});
    this.#claiming = held;
    try {
      await running;
    } finally {
      if (this.#claiming === held) this.#claiming = undefined;
      if (this.#claimAgain) void this.claim();
    }
  }

  /** The claim under way, if any (a closing runtime waits for it). */
  get claiming(): Promise<void> | undefined {
    return this.#claiming;
  }

  /**
   * A call another process submitted, now owned here: it runs (`run`), or it is held here to be
   * cancelled or rejected. It starts where its record says, and the machine admits it as any call.
   */
  async adopt({ record: claimed, lastSeq }: ClaimedCall, run: boolean): Promise<LiveCall | undefined> {
    const { registry, tools, settings, writer, send, recover, drop } = this.deps;
    const stale = registry.get(claimed.callId);
    if (stale) drop(stale);
    const tool = tools.get(claimed.toolName);
    const validated = tool ? await tool.validateInput(claimed.args) : undefined;
    if (!tool || !validated?.ok) {
      await recover(claimed);
      return registry.get(claimed.callId);
    }
    const record = changeableCopy(claimed, { ownerId: settings.instanceId });
    // A call its client stored without events: its `queued` event is the first this worker stores.
    const seq = afterQueuedEvent(writer, record, lastSeq);
    const call = registry.create({ record, tool, args: validated.value, lastSeq: seq });
    call.adopted = true;
    writer.record(record);
    if (run) send(call, { type: 'ADMIT' });
    return call;
  }

  /**
   * A worker that closes gives the calls it claimed and has not started back to the store, with no
   * owner, for another worker to claim; they lose nothing. (Calls it runs end `cancelled`, as in
   * one process.) A claim still out gives its calls back when it returns (see `claim`).
   */
  releaseWaiting(): void {
    const { registry, slots, timers } = this.deps;
    for (const call of registry.all()) {
      const { record } = call;
      if (!call.adopted || call.holdsSlot || record.status !== 'queued') continue;
      timers.clearAll(call);
      slots.release(call);
      registry.release(call);
      this.#giveBack(record);
    }
  }

  /** Back to the store with no owner, for another worker to claim (a queued call that never started). */
  #giveBack(record: CallRecord): void {
    const { ownerId: _, ...released } = record;
    this.deps.writer.record(released);
  }

  /**
   * A request for a call this process does not run. A call no one owns yet is claimed here and
   * handled here; one a worker runs is asked of that worker through the store.
   */
  async controlRemote(control: CallControl): Promise<boolean> {
    const { store, settings, writer } = this.deps;
    if (!store.send) return false;
    const [unowned] = await store.claimQueued(settings.instanceId, 1, control.callId);
    if (unowned) {
      if (control.action === 'approve') {
        // Approved, it goes back to the workers: no owner, and the notice of a queued call.
        const { ownerId: _, ...released } = unowned.record;
        await writer.recordConfirmed({ ...released, approval: 'approved' });
        return true;
      }
      await this.adopt(unowned, false);
      return this.deps.control(control);
    }
    const record = await store.getCall(control.callId);
    if (!record || isTerminalStatus(record.status)) return false;
    if (control.action !== 'cancel' && record.approval !== 'pending') return false;
    await store.send(control);
    return true;
  }
}
