import type { CallEvent, CallRecord, CallStatus, Notification } from '@baton/contracts';
import {
  type CallFilter,
  type CallPage,
  DEFAULT_PAGE_SIZE,
  type NotificationFilter,
  type Store,
  type StoreWrite,
} from './store.js';

interface StoredCall {
  record: CallRecord;
  /** Insertion order: the newest-first order of `listCalls` and its cursor. */
  order: number;
  events: CallEvent[];
}

function statusFilter(status: CallFilter['status']): ((status: CallStatus) => boolean) | undefined {
  if (status === undefined) return undefined;
  if (typeof status === 'string') return (candidate) => candidate === status;
  const allowed = new Set(status);
  return (candidate) => allowed.has(candidate);
}

/** The default store: everything in this process's memory. Fast, and gone when the process ends. */
export class MemoryStore implements Store {
  readonly #calls = new Map<string, StoredCall>();
  readonly #notifications = new Map<string, Notification>();
  #nextOrder = 0;

  async write(batch: StoreWrite): Promise<void> {
    for (const record of batch.calls ?? []) {
      const stored = this.#calls.get(record.callId);
      if (stored) stored.record = { ...record };
      else this.#calls.set(record.callId, { record: { ...record }, order: this.#nextOrder++, events: [] });
    }
    for (const event of batch.events ?? []) this.#calls.get(event.callId)?.events.push(event);
    for (const notification of batch.notifications ?? []) {
      this.#notifications.set(notification.id, { ...notification });
    }
  }

  async getCall(callId: string): Promise<CallRecord | undefined> {
    const stored = this.#calls.get(callId);
    return stored && { ...stored.record };
  }

  async listCalls(filter: CallFilter = {}): Promise<CallPage> {
    const limit = filter.limit ?? DEFAULT_PAGE_SIZE;
    const before = filter.cursor === undefined ? Number.POSITIVE_INFINITY : Number(filter.cursor);
    const matchesStatus = statusFilter(filter.status);
    const matching = [...this.#calls.values()]
      .filter(
        ({ record, order }) =>
          order < before &&
          (filter.sessionId === undefined || record.sessionId === filter.sessionId) &&
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

  async listEvents(callId: string, fromSeq = 0): Promise<CallEvent[]> {
    return (this.#calls.get(callId)?.events ?? []).filter((event) => event.seq >= fromSeq);
  }

  async listNotifications(filter: NotificationFilter = {}): Promise<Notification[]> {
    return [...this.#notifications.values()]
      .filter(
        (notification) =>
          (filter.sessionId === undefined || notification.sessionId === filter.sessionId) &&
          (filter.status === undefined || notification.status === filter.status),
      )
      .map((notification) => ({ ...notification }));
  }

  async acknowledgeNotification(id: string, at: number): Promise<boolean> {
    const notification = this.#notifications.get(id);
    if (!notification || notification.status === 'acknowledged') return false;
    notification.status = 'acknowledged';
    notification.acknowledgedAt = at;
    return true;
  }

  async deleteEndedBefore(time: number): Promise<number> {
    let deleted = 0;
    for (const [callId, { record }] of this.#calls) {
      if (record.endedAt !== undefined && record.endedAt < time) {
        this.#calls.delete(callId);
        deleted++;
      }
    }
    for (const [id, notification] of this.#notifications) {
      if (!this.#calls.has(notification.callId) && notification.status === 'acknowledged') {
        this.#notifications.delete(id);
      }
    }
    return deleted;
  }

  async close(): Promise<void> {}
}

export function memoryStore(): Store {
  return new MemoryStore();
}
