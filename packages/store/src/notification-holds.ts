import type { Notification } from '@baton/contracts';
import type { NotificationHold } from './store.js';

/**
 * The holds of the in-memory store's notifications: which instance holds each one that a loop
 * was given and has not acknowledged. A hold lapses once its holder is no longer registered.
 */
export class NotificationHolds {
  readonly #holderOf = new Map<string, string>();

  /** Holds the queued notifications of `all` (in their order) that `hold` names and no live holder holds. */
  hold(
    all: Iterable<Notification>,
    { sessionId, schedulings, holder }: NotificationHold,
    isRegistered: (instanceId: string) => boolean,
  ): Notification[] {
    const held: Notification[] = [];
    for (const notification of all) {
      if (notification.sessionId !== sessionId || notification.status !== 'queued') continue;
      if (!schedulings.includes(notification.scheduling)) continue;
      const current = this.#holderOf.get(notification.id);
      if (current !== undefined && isRegistered(current)) continue;
      this.#holderOf.set(notification.id, holder);
      held.push({ ...notification });
    }
    return held;
  }

  /** Ends `holder`'s holds of these notifications. */
  release(ids: readonly string[], holder: string): void {
    for (const id of ids) if (this.#holderOf.get(id) === holder) this.#holderOf.delete(id);
  }

  /** The notification is acknowledged, or gone: it has no hold. */
  forget(id: string): void {
    this.#holderOf.delete(id);
  }
}
