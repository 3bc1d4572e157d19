import {
  BatonError,
  type CallRecord,
  type CallReply,
  isTerminalStatus,
  type ToolRegistry,
} from '@baton/contracts';
import type { ClaimedCall, Store } from '@baton/store';
import type { Send } from '../call/driver.js';
import type { LiveCall } from '../call/live-call.js';
import type { CallRegistry } from '../call/registry.js';
import { replyOf } from '../call/replies.js';
import type { Slots } from '../call/slots.js';
import type { Timers } from '../call/timers.js';
import { changeableCopy } from '../changeable-copy.js';
import type { Clock } from '../clock.js';
import { type ToldBefore, toldBefore } from '../ledger/replacing.js';
import type { Failures } from '../log.js';
import { INTERRUPTED_MESSAGE, LOST_CLAIM_MESSAGE } from '../messages.js';
import { afterQueuedEvent } from '../queued-event.js';
import type { StoreOutage } from '../ride-out.js';
import type { Settings } from '../settings.js';
import type { Peers } from '../shared/peers.js';
import type { WriteBatcher } from '../write-batcher.js';
import { goneInstances, thisInstance, unregisteredTool } from './instances.js';

export interface RecoveryDeps {
  settings: Pick<Settings, 'instanceId' | 'holdMs' | 'forTool'>;
  tools: ToolRegistry;
  store: Pick<
    Store,
    | 'heartbeat'
    | 'registerInstance'
    | 'getCall'
    | 'listInstances'
    | 'claimCalls'
    | 'listEvents'
    | 'heldBy'
    | 'listNotifications'
    | 'acknowledgeNotification'
  >;
  registry: CallRegistry;
  /** Told of the instances each look for gone ones lists. */
  peers: Pick<Peers, 'seen'>;
  writer: Pick<WriteBatcher, 'add'>;
  slots: Pick<Slots, 'release'>;
  timers: Pick<Timers, 'clearAll'>;
  send: Send;
  clock: Clock;
  failures: Failures;
  closed: () => boolean;
  /** Carries out the requests stored for calls taken up here (see SharedWorker.catchUp). */
  catchUp: (callIds: readonly string[]) => Promise<void>;
  /** How many requests the store could not serve so far (see StoreOutage.troubles). */
  outage: Pick<StoreOutage, 'troubles'>;
  /** After an outage: takes up the calls held here that a lost answer hid (see `retakeHeld`). */
  retake: () => Promise<void>;
  /** Runs work while no claim is out (see SharedWorker.exclusive). */
  exclusive: (work: () => Promise<void>) => Promise<void>;
  /** Takes a queued call held here, as a claim does (see SharedWorker.adopt). */
  adopt: (claimed: ClaimedCall) => Promise<unknown>;
}

/** How a call ends that a process stopped running and nothing can take up. */
export const INTERRUPTED = {
  ok: false,
  error: { code: 'interrupted', message: INTERRUPTED_MESSAGE },
  output: { error: INTERRUPTED_MESSAGE },
} as const;

/**
 * The calls of instances that are gone: this runtime's lease (its heartbeat), the orphans it
 * claims and takes up, and the copies of calls it lost to another instance.
 */
export class Recovery {
  /** Calls claimed here whose taking up failed: tried again at each recovery tick (see `takeUp`). */
  readonly #notTakenUp = new Map<string, () => Promise<unknown>>();
  /** The store's troubles when the calls held here were last taken up (see `#afterOutage`). */
  #troublesSeen = 0;

  constructor(private readonly deps: RecoveryDeps) {}

  /**
   * The heartbeat renews this instance's lease. One that finds itself unregistered lost its lease
   * (it was stopped or cut off for longer than the lease): its calls went to others, and its writes
   * for them are fenced off. It registers again, so that calls it takes from now on are recovered
   * if it dies.
   */
  async beat(): Promise<void> {
    const { store, settings, clock, registry, closed } = this.deps;
    const now = clock.now();
    if (await store.heartbeat(settings.instanceId, now)) return this.#afterOutage();
    if (closed()) return;
    await store.registerInstance(thisInstance(settings.instanceId, now, settings.holdMs));
    // The calls another instance took while this one was away stop here.
    for (const call of registry.all()) {
      const stored = await store.getCall(call.record.callId);
      if (stored?.ownerId !== undefined && stored.ownerId !== settings.instanceId) this.drop(call);
    }
  }

  /**
   * Once the store answers again after it could not serve some requests, the calls it says this
   * instance holds are checked: a claim whose answer was lost left some held here that nothing
   * here knows of, and no other instance would ever take them up (this one is alive).
   */
  async #afterOutage(): Promise<void> {
    const troubles = this.deps.outage.troubles;
    if (troubles === this.#troublesSeen || this.deps.closed()) return;
    await this.deps.retake();
    this.#troublesSeen = troubles;
  }

  /**
   * A worker's part after an outage: each unfinished call the store says it holds that it does not
   * run is taken up, a queued one as a claim takes it, any other under the recovery rules (the
   * answer of an orphans' claim was lost). No claim runs meanwhile: none can bring one of them again.
   */
  readonly retakeHeld = (): Promise<void> => {
    const { store, settings, registry, exclusive, adopt, failures, catchUp } = this.deps;
    const heldBy = store.heldBy?.bind(store);
    if (!heldBy) return Promise.resolve();
    return exclusive(async () => {
      const unknown = (await heldBy(settings.instanceId)).filter(
        ({ record }) => !registry.has(record.callId) && !registry.heldEnded(record.callId),
      );
      const taken: string[] = [];
      for (const claimed of unknown) {
        const { callId } = claimed.record;
        // The read may be older than an end written since (the call then left the registry): the
        // record now says whether the call is still this worker's to take up.
        const now = await store.getCall(callId);
        if (!now || isTerminalStatus(now.status) || now.ownerId !== settings.instanceId) continue;
        failures.report('claim', new Error(LOST_CLAIM_MESSAGE), callId);
        await this.takeUp(callId, () =>
          now.status === 'queued' ? adopt({ ...claimed, record: now }) : this.recover(now),
        );
        taken.push(callId);
      }
      if (taken.length > 0) await catchUp(taken);
    });
  };

  /**
   * This instance no longer owns the call (another claimed it, and may be running it): its
   * execution is aborted, its slot freed, and it writes nothing more. A caller here hears that it
   * continues in the background, which it does, elsewhere; or `reply`, when the call stops here
   * for another reason (it was never kept).
   */
  drop(call: LiveCall, reply?: CallReply): void {
    const { timers, registry, slots, settings } = this.deps;
    call.dropped = true;
    timers.clearAll(call);
    registry.release(call);
    if (call.executing) call.abort(new BatonError('interrupted', INTERRUPTED_MESSAGE));
    call.answer(reply ?? replyOf(call.record, settings.forTool(call.tool)));
    slots.release(call);
  }

  /** The orphans' claim, while no claim of queued calls is out (see `retakeHeld`). */
  recoverOrphans(): Promise<void> {
    return this.deps.exclusive(() => this.#recoverOrphans());
  }

  async #recoverOrphans(): Promise<void> {
    const { store, settings, clock } = this.deps;
    // Calls claimed before whose taking up failed go first: nobody else will recover them.
    const retried = [...this.#notTakenUp.keys()];
    for (const [callId, takeUp] of [...this.#notTakenUp]) await this.takeUp(callId, takeUp);
    const instances = await store.listInstances();
    this.deps.peers.seen(instances);
    const gone = goneInstances(instances, settings.instanceId, clock.now());
    const orphans = await store.claimCalls(gone, settings.instanceId);
    await Promise.all(orphans.map((record) => this.takeUp(record.callId, () => this.recover(record))));
    // A cancel sent to the instance that died reached no one, nor one sent to a call that waited
    // here to be taken up: they are carried out now (those still not taken up, once they are).
    const taken = [...retried, ...orphans.map((record) => record.callId)];
    if (taken.length > 0) await this.deps.catchUp(taken);
  }

  /**
   * Takes up a call this instance has just claimed in the store (an orphan, or a queued call). Once
   * claimed it is this instance's: if taking it up fails (a read fails under load, the database
   * is away a moment), it is kept and tried again at every recovery tick, never left owned here
   * and run by no one.
   */
  readonly takeUp = async (callId: string, takeUp: () => Promise<unknown>): Promise<void> => {
    try {
      await takeUp();
      this.#notTakenUp.delete(callId);
    } catch (error) {
      this.deps.failures.report('take up a claimed call', error, callId);
      this.#notTakenUp.set(callId, takeUp);
    }
  };

  /**
   * A call whose runtime died, taken up at the state its record was left in: one that waits for its
   * approval waits here; one that never started, or an idempotent one with attempts left, is
   * queued again (same call id, next attempt) with its tool's own settings, budget included; any
   * other fails with `interrupted`.
   */
  readonly recover = async (orphan: CallRecord): Promise<void> => {
    const { registry, tools, store, settings, send, writer } = this.deps;
    // A copy this instance still holds from before it lost the call is stale now.
    const stale = registry.get(orphan.callId);
    if (stale) this.drop(stale);
    const tool = tools.get(orphan.toolName);
    const record = changeableCopy(orphan, { ownerId: settings.instanceId });
    // A client's call whose worker died before it stored the call's first event (see queuedEventOf).
    const storedSeq = (await store.listEvents(orphan.callId)).at(-1)?.seq ?? 0;
    const lastSeq = afterQueuedEvent(writer, record, storedSeq);
    const awaitsApproval = tool !== undefined && orphan.approval === 'pending';
    const runsAgain =
      tool !== undefined &&
      (orphan.status === 'queued' ||
        (tool.execution.idempotent && orphan.attempt < settings.forTool(tool).recoveryAttempts));
    const validated = awaitsApproval || runsAgain ? await tool?.validateInput(orphan.args) : undefined;
    const told = await this.#toldBefore(orphan);
    const create = (args: unknown, as = tool) => {
      const call = registry.create({
        record,
        tool: as ?? unregisteredTool(orphan.toolName),
        args,
        lastSeq,
        recovered: true,
      });
      if (told) {
        call.talk.updateNotificationId = told.updateNotificationId;
        call.talk.reminderNotificationId = told.reminderNotificationId;
      }
      return call;
    };
    if (tool && awaitsApproval) {
      // Still waiting for its approval: it waits here now, out of the queue, as it did there.
      send(create(validated?.ok ? validated.value : orphan.args), { type: 'ADMIT' });
      return;
    }
    if (tool && runsAgain && validated?.ok) {
      const call = create(validated.value);
      send(call, { type: 'REQUEUE' });
      send(call, { type: 'ADMIT' });
      return;
    }
    const call = create(orphan.args);
    send(call, { type: 'FAIL', outcome: INTERRUPTED });
  };

  /**
   * What the call told its session before its process died and nobody was given yet (its update,
   * its reminder), read back from the store, so that what it tells next, and its end, replace them
   * here as they would have there. Read only for a call that may have told something.
   */
  async #toldBefore(orphan: CallRecord): Promise<ToldBefore | undefined> {
    if (!orphan.detached || (orphan.update === undefined && !orphan.notifyAfterMs?.length)) return undefined;
    const { store, clock, failures } = this.deps;
    const queued = await store.listNotifications({ sessionId: orphan.sessionId, status: 'queued' });
    const told = toldBefore(queued, orphan.callId);
    for (const id of told.replaced) {
      store.acknowledgeNotification(id, clock.now()).catch(failures.on('replace an update', orphan.callId));
    }
    return told;
  }
}
