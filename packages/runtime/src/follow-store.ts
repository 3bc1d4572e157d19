import { Observable } from 'rxjs';
import { FOLLOW_PAGE_SIZE } from './defaults.js';

/** How a consumer paces a follower (see `followStore`). */
export interface FollowOptions {
  /**
   * Awaited before each page is read: a consumer that cannot take more yet (an HTTP response
   * waiting for `drain`) holds the reading back, so a slow reader never makes the server buffer a
   * history, nor the events it has not taken. Without it, a long replay still yields the event
   * loop between pages.
   */
  ready?: () => Promise<void> | void;
  /**
   * False: read what is stored now, then complete (a replay). Default true: go on with what is
   * stored later, each once, in order.
   */
  live?: boolean;
  /**
   * The call (or session) is new: nothing of it can be stored before this subscription (its id was
   * just made here). Its stored events are then not read first; what is stored later is.
   */
  fresh?: boolean;
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * What is stored after `after`, then whatever is stored later, each item once and in store order.
 * Every signal on `stored$` (sent only after the thing it announces is stored) reads the store again
 * from the last position seen; signals that come during a read are folded into one more read. The
 * store is the only source, so a subscriber that resumes from a position misses nothing and sees
 * nothing twice. It reads a page of `FOLLOW_PAGE_SIZE` at a time, and the next page only once the
 * consumer is `ready`.
 */
export function followStore<T>(
  stored$: Observable<unknown>,
  readPage: (position: number, limit: number) => Promise<readonly T[]>,
  positionOf: (item: T) => number,
  after: number,
  /** False for a follower that subscribes before anything it follows can be stored. */
  readFirst = true,
  options: FollowOptions = {},
  /**
   * A signal that is itself the item after `position` (an event of this process, as its bus tells
   * of it once it is stored): given as it is, with no read of the store. Only for a follower that
   * sets no `ready`, which paces every item through a read.
   */
  itemOf?: (signal: unknown, position: number) => T | undefined,
): Observable<T> {
  const { ready, live = true } = options;
  return new Observable<T>((subscriber) => {
    let position = after;
    let reading = false;
    let readAgain = false;
    const read = async (): Promise<void> => {
      if (reading) {
        readAgain = true;
        return;
      }
      reading = true;
      try {
        let full = false;
        do {
          readAgain = false;
          // A consumer says when it can take more; without one, a long replay still yields the loop.
          if (ready) await ready();
          else if (full) await nextTurn();
          if (subscriber.closed) return;
          const page = await readPage(position, FOLLOW_PAGE_SIZE);
          full = page.length >= FOLLOW_PAGE_SIZE;
          for (const item of page) {
            if (subscriber.closed) return;
            position = positionOf(item);
            subscriber.next(item);
          }
        } while ((full || readAgain) && !subscriber.closed);
        if (!live) subscriber.complete();
      } catch (error) {
        subscriber.error(error);
      } finally {
        reading = false;
      }
    };
    const direct = ready === undefined ? itemOf : undefined;
    const subscription = live
      ? stored$.subscribe((signal) => {
          const item = reading ? undefined : direct?.(signal, position);
          if (item === undefined) {
            void read();
            return;
          }
          position = positionOf(item);
          subscriber.next(item);
        })
      : undefined;
    if (readFirst || !live) void read();
    return () => subscription?.unsubscribe();
  });
}
