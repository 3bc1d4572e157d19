import { AsyncResource } from 'node:async_hooks';
import type { CallEvent, Notification } from '@baton/contracts';
import type { NotificationFilter, StoreNotifications } from '@baton/store';
import { merge, Observable, filter as rxFilter } from 'rxjs';

/** The events stored with a notification of their call. */
const TOLD: ReadonlySet<CallEvent['type']> = new Set(['notification', 'update', 'still_running']);

/** Whose notifications to watch: one session's, or those of every session under a prefix (a tenant's). */
export type NotificationTarget = { sessionId: string } | { sessionPrefix: string };

export interface WatchDeps {
  store: Pick<StoreNotifications, 'listNotifications'>;
  /** This process's stored events: a notification's says it is stored. */
  events$: Observable<CallEvent>;
  /** Other processes' commits that concern these sessions, and a poll under them (a shared store). */
  storedElsewhere: (about: (sessionIds: readonly string[]) => boolean) => Observable<unknown>;
  /** A read that failed: reported, and made again at the next sign (a store may be away for a while). */
  failed: (error: unknown) => void;
}

/**
 * The target's notifications not yet acknowledged, as they come: those queued now first, then each
 * new one once it is stored, by this process or another on a shared store. Each is given once; one
 * acknowledged before it was read (another loop took it) is not given. It completes when the
 * runtime closes (its `events$` does).
 */
export function watchNotifications(deps: WatchDeps, target: NotificationTarget): Observable<Notification> {
  const concerns =
    'sessionId' in target
      ? (sessionId: string) => sessionId === target.sessionId
      : (sessionId: string) => sessionId.startsWith(target.sessionPrefix);
  const filter: NotificationFilter =
    'sessionId' in target
      ? { sessionId: target.sessionId, status: 'queued' }
      : { sessionPrefix: target.sessionPrefix, status: 'queued' };
  return new Observable<Notification>((subscriber) => {
    // In the subscriber's async context, not the one of the call whose write woke the read: a turn
    // started from here is a turn of its own (a framework's run, a span), not a nested one.
    const give = AsyncResource.bind((notification: Notification) => subscriber.next(notification));
    /** The ids given, of those still queued at the last read. */
    let given = new Set<string>();
    let reading = false;
    let readAgain = false;
    const read = async (): Promise<void> => {
      if (reading) {
        readAgain = true;
        return;
      }
      reading = true;
      try {
        do {
          readAgain = false;
          const queued = await deps.store.listNotifications(filter);
          const still = new Set<string>();
          for (const notification of queued) {
            if (subscriber.closed) return;
            still.add(notification.id);
            if (!given.has(notification.id)) give(notification);
          }
          given = still;
        } while (readAgain && !subscriber.closed);
      } catch (error) {
        if (!subscriber.closed) deps.failed(error);
      } finally {
        reading = false;
      }
    };
    const stored = merge(
      // An end's notification has its event; an update's, and a reminder's, are stored with theirs.
      deps.events$.pipe(rxFilter((event) => TOLD.has(event.type) && concerns(event.sessionId))),
      deps.storedElsewhere((sessionIds) => sessionIds.some(concerns)),
    ).subscribe(() => void read());
    const closing = deps.events$.subscribe({ complete: () => subscriber.complete() });
    void read();
    return () => {
      stored.unsubscribe();
      closing.unsubscribe();
    };
  });
}
