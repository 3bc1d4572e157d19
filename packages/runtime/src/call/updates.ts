import { isTerminalStatus, type Notification, type Scheduling, type UpdateOptions } from '@baton/contracts';
import type { StoreNotifications } from '@baton/store';
import type { Clock } from '../clock.js';
import { newId } from '../ids.js';
import type { Failures } from '../log.js';
import { stillRunningBody, stillRunningTitle, updateBody, updateTitle } from '../messages.js';
import { storableValue } from '../storable.js';
import type { WriteBatcher } from '../write-batcher.js';
import type { LiveCall } from './live-call.js';
import { formattedCall } from './replies.js';
import type { Timers } from './timers.js';
import type { CallWrites } from './writes.js';

export interface UpdatesDeps {
  writes: Pick<CallWrites, 'emit' | 'save'>;
  writer: Pick<WriteBatcher, 'write'>;
  timers: Pick<Timers, 'armFor'>;
  clock: Pick<Clock, 'now'>;
  store: Pick<StoreNotifications, 'acknowledgeNotification'>;
  failures: Failures;
  updateIntervalMs: number;
}

/**
 * Intermediate results (`ctx.update`): the latest is kept on the record (`update`) and is an
 * `update` event; for a call in the background it is also a notification, delivered by its
 * scheduling as the end is. They coalesce three ways: one that comes within `updateIntervalMs` of
 * the last written waits, merged with those after it (the latest stands); a newer notification
 * replaces the one before it (acknowledged, so not given, if no loop took it yet); and the end
 * replaces the last (see `replacedByEnd`). A loop that holds several of a call keeps the latest.
 */
/** How soon each scheduling reaches the model, for merging updates: the sooner stands. */
const URGENCY: Record<Scheduling, number> = { silent: 0, when_idle: 1, interrupt: 2 };

export class CallUpdates {
  constructor(private readonly deps: UpdatesDeps) {}

  update(call: LiveCall, given: unknown, { scheduling }: UpdateOptions): void {
    if (isTerminalStatus(call.record.status)) return;
    const talk = call.talk;
    // The latest value stands; the most urgent scheduling of those merged stands with it, so an
    // `interrupt` ("the build failed") followed at once by an ordinary update still interrupts.
    const asked = scheduling ?? call.tool.execution.scheduling;
    const waiting = talk.mergedUpdate?.scheduling;
    talk.mergedUpdate = {
      value: storableValue(given),
      scheduling: waiting !== undefined && URGENCY[waiting] > URGENCY[asked] ? waiting : asked,
    };
    if (talk.updateTimer === undefined) this.#write(call);
  }

  /**
   * A call promoted with an update its tool told while the caller still waited: the session hears
   * that update now, as it would have had the call been in the background then. One still merging
   * is written in its time, and says more.
   */
  promoted(call: LiveCall): void {
    const { record } = call;
    const talk = call.talking;
    if (!record.update || !record.detached || isTerminalStatus(record.status)) return;
    if (talk?.updateNotificationId !== undefined || talk?.mergedUpdate !== undefined) return;
    if (record.run && !record.run.signalOnCompletion) return;
    const { updateSeq, value } = record.update;
    const notification = this.#notificationOf(call, updateSeq, value, call.tool.execution.scheduling);
    this.#tell(call, 'updateNotificationId', notification);
  }

  /** The end of a detached call is its session's now: an update not yet given is not given after it. */
  replacedByEnd(call: LiveCall): void {
    const talk = call.talking;
    if (!talk) return;
    talk.mergedUpdate = undefined;
    this.#replace(call, 'updateNotificationId', undefined);
    this.#replace(call, 'reminderNotificationId', undefined);
  }

  /**
   * `notifyAfterMs`: arms the next time the call's session is told that it still runs, counted
   * from when it was made (a call taken up by another process goes on from where it is); a time
   * that passed while nobody ran the call is skipped.
   */
  remind(call: LiveCall): void {
    const { clock, timers } = this.deps;
    const { createdAt, notifyAfterMs } = call.record;
    const runningForMs = clock.now() - createdAt;
    const next = notifyAfterMs?.find((afterMs) => afterMs > runningForMs);
    if (next === undefined) return;
    timers.armFor(call, 'reminder', next - runningForMs, () => {
      if (isTerminalStatus(call.record.status)) return;
      if (call.record.detached) this.#stillRunning(call, next);
      this.remind(call);
    });
  }

  #stillRunning(call: LiveCall, runningForMs: number): void {
    const { record } = call;
    const notification: Notification = {
      ...this.#notificationBase(call, call.tool.execution.scheduling),
      runningForMs,
      title: stillRunningTitle(record.toolName),
      body: stillRunningBody(formattedCall(record, call.settings), runningForMs),
      output: { call_id: record.callId, status: 'running', running_for_ms: runningForMs },
    };
    this.deps.writes.emit(call, { type: 'still_running', runningForMs });
    this.#tell(call, 'reminderNotificationId', notification);
  }

  #write(call: LiveCall): void {
    const talk = call.talk;
    const merged = talk.mergedUpdate;
    if (!merged || isTerminalStatus(call.record.status)) return;
    talk.mergedUpdate = undefined;
    const { writes, clock, timers, updateIntervalMs } = this.deps;
    const { record } = call;
    const updateSeq = (record.update?.updateSeq ?? 0) + 1;
    record.update = { updateSeq, value: merged.value, at: clock.now() };
    record.updatedAt = record.update.at;
    writes.emit(call, { type: 'update', updateSeq, value: merged.value, scheduling: merged.scheduling });
    writes.save(call);
    if (record.detached && !(record.run && !record.run.signalOnCompletion)) {
      const notification = this.#notificationOf(call, updateSeq, merged.value, merged.scheduling);
      // No `notification` event: that one tells of the end's notification (a follower stops at it).
      this.#tell(call, 'updateNotificationId', notification);
      // An update says more than that the call still runs.
      this.#replace(call, 'reminderNotificationId', undefined);
    }
    timers.armFor(call, 'update', updateIntervalMs, () => this.#write(call));
  }

  /** Queues a notification of the call's, which replaces the one before it of its kind. */
  #tell(
    call: LiveCall,
    which: 'updateNotificationId' | 'reminderNotificationId',
    notification: Notification,
  ) {
    const talk = call.talk;
    talk.notificationsUnwritten ??= new Map();
    const unwritten = talk.notificationsUnwritten;
    const written = this.deps.writer.write('notifications', notification);
    unwritten.set(notification.id, written);
    // Once written (or refused, which its batch reports), a replacement acknowledges it at once.
    const settled = () => unwritten.delete(notification.id);
    written.then(settled, settled);
    this.#replace(call, which, notification.id);
  }

  #replace(
    call: LiveCall,
    which: 'updateNotificationId' | 'reminderNotificationId',
    by: string | undefined,
  ): void {
    const talk = call.talk;
    const before = talk[which];
    talk[which] = by;
    if (before === undefined) return;
    const acknowledge = () => this.deps.store.acknowledgeNotification(before, this.deps.clock.now());
    // One still on its way to the store is acknowledged once it is there: acknowledged before, it
    // would be found by no one, then stored as not given, beside the end that replaced it.
    const unwritten = talk.notificationsUnwritten?.get(before);
    (unwritten ? unwritten.then(acknowledge, () => false) : acknowledge()).catch(
      this.deps.failures.on('replace an update', call.record.callId),
    );
  }

  #notificationOf(call: LiveCall, updateSeq: number, value: unknown, scheduling: Scheduling): Notification {
    const { record } = call;
    return {
      ...this.#notificationBase(call, scheduling),
      updateSeq,
      title: updateTitle(record.toolName, updateSeq),
      body: updateBody(formattedCall(record, call.settings), updateSeq, value),
      output: { call_id: record.callId, status: 'running', update_seq: updateSeq, update: value },
    };
  }

  #notificationBase(call: LiveCall, scheduling: Scheduling) {
    const { record } = call;
    return {
      id: newId(),
      callId: record.callId,
      sessionId: record.sessionId,
      toolName: record.toolName,
      status: 'queued' as const,
      outcome: 'running' as const,
      scheduling,
      createdAt: this.deps.clock.now(),
    };
  }
}
