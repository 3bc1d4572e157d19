import { Observable } from 'rxjs';

/**
 * What is stored after `after`, then whatever is stored later, each item once and in store order.
 * Every signal on `stored$` (sent only after the thing it announces is stored) reads the store again
 * from the last position seen; signals that come during a read are folded into one more read. The
 * store is the only source, so a subscriber that resumes from a position misses nothing and sees
 * nothing twice.
 */
export function followStore<T>(
  stored$: Observable<unknown>,
  readAfter: (position: number) => Promise<readonly T[]>,
  positionOf: (item: T) => number,
  after: number,
  /** False for a follower that subscribes before anything it follows can be stored. */
  readFirst = true,
): Observable<T> {
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
        do {
          readAgain = false;
          for (const item of await readAfter(position)) {
            if (subscriber.closed) return;
            position = positionOf(item);
            subscriber.next(item);
          }
        } while (readAgain && !subscriber.closed);
      } catch (error) {
        subscriber.error(error);
      } finally {
        reading = false;
      }
    };
    const subscription = stored$.subscribe(() => void read());
    if (readFirst) void read();
    return () => subscription.unsubscribe();
  });
}
