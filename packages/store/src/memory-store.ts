import {
  type CallEvent,
  type CallRecord,
  type EventResolution,
  isTerminalStatus,
  type Notification,
  type RuntimeInstance,
  type Schedule,
  type StepResult,
  type WebhookDelivery,
} from '@baton/contracts';
import { MemoryDeliveries } from './memory-deliveries.js';
import { repeatedEvents } from './memory-events.js';
import { inSession, statusFilter } from './memory-filters.js';
import { NotificationHolds } from './notification-holds.js';
import { queueDepthOf } from './queue-depth.js';
import { cursorPosition, scheduleAfterFiring } from './rows.js';
import {
  type CallFilter,
  type CallPage,
  type ClaimedCall,
  DEFAULT_PAGE_SIZE,
  type DeliveryCountFilter,
  type DeliveryFilter,
  type NotificationCountFilter,
  type NotificationFilter,
  type NotificationHold,
  type QueueDepth,
  type SessionEvent,
  type Store,
  type StoreWrite,
} from './store.js';
import { withStoreErrors } from './store-errors.js';

interface StoredCall {
  record: CallRecord;
  /** Insertion order: the newest-first order of `listCalls` and its cursor. */
  order: number;
  /** Made with the first artifact: most calls never have one. */
  artifacts?: Map<string, string>;
}

/** The default store: everything in this process's memory. Fast, and gone when the process ends. */
export class MemoryStore implements Store {
  readonly #calls = new Map<string, StoredCall>();
  readonly #events = new Map<string, CallEvent[]>();
  /** Every stored event in write order, by session; `position` counts across sessions. */
  readonly #sessionEvents = new Map<string, SessionEvent[]>();
  #nextPosition = 1;
  readonly #steps = new Map<string, Map<string, unknown>>();
  readonly #resolutions = new Map<string, EventResolution>();
  readonly #schedules = new Map<string, Schedule>();
  readonly #notifications = new Map<string, Notification>();
  readonly #instances = new Map<string, RuntimeInstance>();
  readonly #holds = new NotificationHolds();
  readonly #deliveries = new MemoryDeliveries();
  #nextOrder = 0;

  async write(batch: StoreWrite): Promise<void> {
    this.#checkNewCalls(batch);
    const repeated = repeatedEvents(batch.events ?? [], (callId) => this.#events.get(callId));
    for (const record of batch.calls ?? []) {
      const stored = this.#calls.get(record.callId);
      if (stored) stored.record = { ...record };
      else {
        const stored: StoredCall = { record: { ...record }, order: this.#nextOrder++ };
        this.#calls.set(record.callId, stored);
      }
    }
    for (const step of batch.steps ?? []) {
      let steps = this.#steps.get(step.callId);
      if (!steps) {
        steps = new Map();
        this.#steps.set(step.callId, steps);
      }
      steps.set(step.stepId, step.value);
    }
    for (const schedule of batch.schedules ?? []) this.#schedules.set(schedule.id, { ...schedule });
    for (const resolution of batch.resolutions ?? []) {
      if (!this.#resolutions.has(resolution.key)) this.#resolutions.set(resolution.key, { ...resolution });
    }
    for (const artifact of batch.artifacts ?? []) {
      const stored = this.#calls.get(artifact.callId);
      if (!stored) continue;
      stored.artifacts ??= new Map();
      stored.artifacts.set(artifact.name, artifact.content);
    }
    for (const event of batch.events ?? []) {
      if (repeated?.has(event)) continue;
      const events = this.#events.get(event.callId);
      if (events) events.push(event);
      else this.#events.set(event.callId, [event]);
      const positioned = { position: this.#nextPosition++, event };
      const session = this.#sessionEvents.get(event.sessionId);
      if (session) session.push(positioned);
      else this.#sessionEvents.set(event.sessionId, [positioned]);
    }
    for (const notification of batch.notifications ?? []) {
      // One stored already is this write made again: it stays as it is (acknowledged, perhaps).
      if (!this.#notifications.has(notification.id)) {
        this.#notifications.set(notification.id, { ...notification });
      }
    }
    for (const delivery of batch.deliveries ?? []) this.#deliveries.add(delivery);
  }

  /** A call the write makes whose id is taken (by another record than this one) refuses the write. */
  #checkNewCalls({ newCalls, calls }: StoreWrite): void {
    for (const callId of newCalls ?? []) {
      const stored = this.#calls.get(callId)?.record;
      const record = calls?.findLast((candidate) => candidate.callId === callId);
      if (stored && JSON.stringify(stored) !== JSON.stringify(record)) {
        throw new Error(`call ${callId} exists already`);
      }
    }
  }

  async getCall(callId: string): Promise<CallRecord | undefined> {
    const stored = this.#calls.get(callId);
    return stored && { ...stored.record };
  }

  async getCalls(callIds: readonly string[]): Promise<CallRecord[]> {
    const found: CallRecord[] = [];
    for (const callId of new Set(callIds)) {
      const stored = this.#calls.get(callId);
      if (stored) found.push({ ...stored.record });
    }
    return found;
  }

  async listCalls(filter: CallFilter = {}): Promise<CallPage> {
    const limit = filter.limit ?? DEFAULT_PAGE_SIZE;
    const before = cursorPosition(filter.cursor) ?? Number.POSITIVE_INFINITY;
    const matchesStatus = statusFilter(filter.status);
    const matching = [...this.#calls.values()]
      .filter(
        ({ record, order }) =>
          order < before &&
          inSession(record.sessionId, filter) &&
          (filter.toolName === undefined || record.toolName === filter.toolName) &&
          (matchesStatus === undefined || matchesStatus(record.status)),
      )
      .sort((a, b) => b.order - a.order);
    const page = matching.slice(0, limit);
    const last = page.at(-1);
    return {
      calls: page.map(({ record }) => ({ ...record })),
      ...(matching.length > limit && last ? { nextCursor: String(last.order) } : {}),
    };
  }

  async listEvents(callId: string, fromSeq = 0, limit = Number.POSITIVE_INFINITY): Promise<CallEvent[]> {
    return (this.#events.get(callId) ?? []).filter((event) => event.seq >= fromSeq).slice(0, limit);
  }

  async listSessionEvents(
    sessionId: string,
    afterPosition = 0,
    limit = Number.POSITIVE_INFINITY,
  ): Promise<SessionEvent[]> {
    const events = this.#sessionEvents.get(sessionId) ?? [];
    // Positions only grow: the first one after `afterPosition` is found by bisection.
    let low = 0;
    let high = events.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if ((events[middle] as SessionEvent).position > afterPosition) high = middle;
      else low = middle + 1;
    }
    return events.slice(low, Math.min(events.length, low + limit));
  }

  async countNotifications(filter: NotificationCountFilter = {}): Promise<number> {
    let count = 0;
    for (const notification of this.#notifications.values()) {
      if (!inSession(notification.sessionId, filter)) continue;
      if (filter.status === undefined || notification.status === filter.status) count++;
    }
    return count;
  }

  async listNotifications(filter: NotificationFilter = {}): Promise<Notification[]> {
    if (filter.id !== undefined) {
      const notification = this.#notifications.get(filter.id);
      const matches =
        notification !== undefined &&
        inSession(notification.sessionId, filter) &&
        (filter.status === undefined || notification.status === filter.status);
      return matches && filter.limit !== 0 ? [{ ...notification }] : [];
    }
    const page: Notification[] = [];
    const limit = filter.limit ?? Number.POSITIVE_INFINITY;
    // Kept in the order they were written, which is the order of their creation.
    let started = filter.after === undefined;
    for (const notification of this.#notifications.values()) {
      if (page.length >= limit) break;
      if (!started) {
        started = notification.id === filter.after;
        continue;
      }
      if (!inSession(notification.sessionId, filter)) continue;
      if (filter.status !== undefined && notification.status !== filter.status) continue;
      page.push({ ...notification });
    }
    return page;
  }

  async acknowledgeNotification(id: string, at: number): Promise<boolean> {
    const notification = this.#notifications.get(id);
    if (!notification || notification.status === 'acknowledged') return false;
    notification.status = 'acknowledged';
    notification.acknowledgedAt = at;
    this.#holds.forget(id);
    return true;
  }

  async holdNotifications(hold: NotificationHold): Promise<Notification[]> {
    return this.#holds.hold(this.#notifications.values(), hold, (id) => this.#instances.has(id));
  }

  async releaseNotifications(ids: readonly string[], holder: string): Promise<void> {
    this.#holds.release(ids, holder);
  }

  async claimDeliveries(
    ownerId: string,
    now: number,
    leaseMs: number,
    limit: number,
  ): Promise<WebhookDelivery[]> {
    return this.#deliveries.claim(ownerId, now, leaseMs, limit);
  }

  async settleDelivery(delivery: WebhookDelivery, ownerId: string): Promise<boolean> {
    return this.#deliveries.settle(delivery, ownerId);
  }

  async listDeliveries(filter?: DeliveryFilter): Promise<WebhookDelivery[]> {
    return this.#deliveries.list(filter);
  }

  async countDeliveries(filter?: DeliveryCountFilter): Promise<number> {
    return this.#deliveries.count(filter);
  }

  async getArtifact(callId: string, name: string): Promise<string | undefined> {
    return this.#calls.get(callId)?.artifacts?.get(name);
  }

  async listArtifacts(callId: string): Promise<string[]> {
    return [...(this.#calls.get(callId)?.artifacts?.keys() ?? [])];
  }

  async listSteps(callId: string): Promise<StepResult[]> {
    return [...(this.#steps.get(callId) ?? [])].map(([stepId, value]) => ({ callId, stepId, value }));
  }

  async getResolution(key: string): Promise<EventResolution | undefined> {
    const resolution = this.#resolutions.get(key);
    return resolution && { ...resolution };
  }

  async listSchedules(filter: { sessionId?: string; enabled?: boolean } = {}): Promise<Schedule[]> {
    return [...this.#schedules.values()]
      .filter(
        (schedule) =>
          (filter.sessionId === undefined || schedule.sessionId === filter.sessionId) &&
          (filter.enabled === undefined || schedule.enabled === filter.enabled),
      )
      .map((schedule) => ({ ...schedule }));
  }

  async claimFiring(
    scheduleId: string,
    dueAt: number,
    next: { nextAt?: number; enabled: boolean },
  ): Promise<boolean> {
    const schedule = this.#schedules.get(scheduleId);
    if (!schedule?.enabled || schedule.nextAt !== dueAt) return false;
    this.#schedules.set(scheduleId, scheduleAfterFiring(schedule, next));
    return true;
  }

  async registerInstance(instance: RuntimeInstance): Promise<void> {
    this.#instances.set(instance.id, { ...instance });
  }

  async heartbeat(instanceId: string, at: number): Promise<boolean> {
    const instance = this.#instances.get(instanceId);
    if (instance) instance.heartbeatAt = at;
    return instance !== undefined;
  }

  async listInstances(): Promise<RuntimeInstance[]> {
    return [...this.#instances.values()].map((instance) => ({ ...instance }));
  }

  async removeInstance(instanceId: string): Promise<void> {
    this.#instances.delete(instanceId);
  }

  async claimCalls(goneInstanceIds: readonly string[], ownerId: string): Promise<CallRecord[]> {
    const gone = new Set(goneInstanceIds);
    const claimed: CallRecord[] = [];
    for (const stored of this.#calls.values()) {
      const { record } = stored;
      if (record.ownerId !== undefined && gone.has(record.ownerId) && !isTerminalStatus(record.status)) {
        stored.record = { ...record, ownerId };
        claimed.push({ ...stored.record });
      }
    }
    for (const id of gone) this.#instances.delete(id);
    return claimed;
  }

  async queueDepth(): Promise<QueueDepth> {
    return queueDepthOf(Array.from(this.#calls.values(), ({ record }) => record));
  }

  async claimQueued(ownerId: string, limit: number, callId?: string): Promise<ClaimedCall[]> {
    const claimed: ClaimedCall[] = [];
    const candidates = callId === undefined ? this.#calls.values() : [this.#calls.get(callId)];
    for (const stored of candidates) {
      if (claimed.length >= limit) break;
      if (!stored) continue;
      const { record } = stored;
      if (record.ownerId !== undefined || record.status !== 'queued') continue;
      if (callId === undefined && record.approval === 'pending') continue;
      stored.record = { ...record, ownerId };
      claimed.push({
        record: { ...stored.record },
        lastSeq: this.#events.get(record.callId)?.at(-1)?.seq ?? 0,
      });
    }
    return claimed;
  }

  async heldBy(ownerId: string): Promise<ClaimedCall[]> {
    const held: ClaimedCall[] = [];
    for (const { record } of this.#calls.values()) {
      if (record.ownerId !== ownerId || record.endedAt !== undefined || isTerminalStatus(record.status))
        continue;
      held.push({ record: { ...record }, lastSeq: this.#events.get(record.callId)?.at(-1)?.seq ?? 0 });
    }
    return held;
  }

  async deleteEndedBefore(time: number, limit = Number.POSITIVE_INFINITY): Promise<number> {
    let deleted = 0;
    const sessions = new Set<string>();
    const ended = [...this.#calls]
      .filter(([, { record }]) => record.endedAt !== undefined && record.endedAt < time)
      .sort(([, a], [, b]) => (a.record.endedAt as number) - (b.record.endedAt as number))
      .slice(0, limit);
    for (const [callId, { record }] of ended) {
      this.#calls.delete(callId);
      this.#events.delete(callId);
      this.#steps.delete(callId);
      for (const [key, resolution] of this.#resolutions) {
        if (resolution.callId === callId) this.#resolutions.delete(key);
      }
      sessions.add(record.sessionId);
      deleted++;
    }
    for (const sessionId of sessions) {
      const kept =
        this.#sessionEvents.get(sessionId)?.filter(({ event }) => this.#calls.has(event.callId)) ?? [];
      if (kept.length > 0) this.#sessionEvents.set(sessionId, kept);
      else this.#sessionEvents.delete(sessionId);
    }
    for (const [id, notification] of this.#notifications) {
      if (!this.#calls.has(notification.callId) && notification.status === 'acknowledged') {
        this.#notifications.delete(id);
      }
    }
    this.#deliveries.forgetSettled((callId) => this.#calls.has(callId));
    return deleted;
  }

  async close(): Promise<void> {}
}

export function memoryStore(): Store {
  return withStoreErrors(new MemoryStore());
}
