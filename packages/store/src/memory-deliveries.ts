import type { WebhookDelivery } from '@baton/contracts';
import { inSession } from './memory-filters.js';
import { DEFAULT_PAGE_SIZE, type DeliveryCountFilter, type DeliveryFilter } from './store.js';

function matchesDelivery(delivery: WebhookDelivery, filter: DeliveryFilter): boolean {
  return (
    inSession(delivery.sessionId, filter) &&
    (filter.status === undefined || delivery.status === filter.status) &&
    (filter.callId === undefined || delivery.callId === filter.callId)
  );
}

/** The memory store's webhook deliveries: in the order they were written, with who holds each and until when. */
export class MemoryDeliveries {
  readonly #deliveries = new Map<string, { delivery: WebhookDelivery; ownerId?: string; until?: number }>();

  /** Keeps a new delivery; one stored already (the write made again) stays as it is. */
  add(delivery: WebhookDelivery): void {
    if (!this.#deliveries.has(delivery.id)) this.#deliveries.set(delivery.id, { delivery: { ...delivery } });
  }

  claim(ownerId: string, now: number, leaseMs: number, limit: number): WebhookDelivery[] {
    const due = [...this.#deliveries.values()]
      .filter(
        ({ delivery, until }) =>
          delivery.status === 'pending' && delivery.nextAt <= now && (until === undefined || until <= now),
      )
      .sort((a, b) => a.delivery.nextAt - b.delivery.nextAt)
      .slice(0, limit);
    for (const held of due) {
      held.ownerId = ownerId;
      held.until = now + leaseMs;
    }
    return due.map(({ delivery }) => structuredClone(delivery));
  }

  settle(delivery: WebhookDelivery, ownerId: string): boolean {
    const held = this.#deliveries.get(delivery.id);
    if (!held || held.ownerId !== ownerId || held.until === undefined) return false;
    this.#deliveries.set(delivery.id, { delivery: structuredClone(delivery) });
    return true;
  }

  list(filter: DeliveryFilter = {}): WebhookDelivery[] {
    const limit = filter.limit ?? DEFAULT_PAGE_SIZE;
    return [...this.#deliveries.values()]
      .reverse()
      .filter(({ delivery }) => matchesDelivery(delivery, filter))
      .slice(0, limit)
      .map(({ delivery }) => structuredClone(delivery));
  }

  count(filter: DeliveryCountFilter = {}): number {
    let count = 0;
    for (const { delivery } of this.#deliveries.values()) if (matchesDelivery(delivery, filter)) count++;
    return count;
  }

  /** Forgets the settled deliveries of the calls that are gone. */
  forgetSettled(isKept: (callId: string) => boolean): void {
    for (const [id, { delivery }] of this.#deliveries) {
      if (!isKept(delivery.callId) && delivery.status !== 'pending') this.#deliveries.delete(id);
    }
  }
}
