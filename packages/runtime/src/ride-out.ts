import type { Store } from '@baton/store';
import type { Clock } from './clock.js';
import { STORE_RETRY_FIRST_MS, STORE_RETRY_MAX_MS } from './defaults.js';
import type { Failures } from './log.js';

/**
 * Riding out a store that cannot be reached for a while (a database restarting, a failover): a
 * request the store says it could not serve (`Store.isUnavailable`) is made again, with backoff,
 * for up to `retryMs` before its error goes on. Only once the store was reached at start: a store
 * that cannot be reached then is a mistake to report at once, not an outage.
 */
export class StoreOutage {
  /** When the store was first found away, while it is. */
  #since: number | undefined;
  #up = false;
  #troubles = 0;

  constructor(
    private readonly store: Pick<Store, 'isUnavailable'>,
    private readonly retryMs: number,
    private readonly clock: Clock,
    private readonly failures: Pick<Failures, 'retrying'>,
  ) {}

  /**
   * How many requests the store could not serve so far. Any of them may have been carried out with
   * its answer lost on the way: whoever made it can tell that one happened since it last looked.
   */
  get troubles(): number {
    return this.#troubles;
  }

  /** The store was reached once (the runtime registered): outages are ridden out from now on. */
  reached(): void {
    this.#up = true;
  }

  /** Runs `attempt`, again while the store is away, for up to `retryMs` from the first failure. */
  ride<T>(attempt: () => Promise<T>): Promise<T> {
    // The way of every request while the store is there: no wrapper of its own.
    if (!this.#up || this.retryMs <= 0) return attempt();
    return attempt().catch((error: unknown) => this.#again(attempt, error));
  }

  async #again<T>(attempt: () => Promise<T>, error: unknown): Promise<T> {
    const first = this.clock.now();
    let wait = STORE_RETRY_FIRST_MS;
    let last = error;
    for (;;) {
      if (!this.store.isUnavailable?.(last)) throw last;
      this.#troubles++;
      const now = this.clock.now();
      this.#away(now, last);
      const left = first + this.retryMs - now;
      if (left <= 0) throw last;
      await new Promise<void>((resolve) => this.clock.setTimeout(resolve, Math.min(wait, left)));
      wait = Math.min(wait * 2, STORE_RETRY_MAX_MS);
      try {
        const result = await attempt();
        this.#since = undefined;
        return result;
      } catch (next) {
        last = next;
      }
    }
  }

  #away(now: number, error: unknown): void {
    // Told once an outage: again only for one that comes after the last was ridden out.
    if (this.#since !== undefined && now - this.#since <= this.retryMs) return;
    this.#since = now;
    this.failures.retrying(`reach the store (riding it out for up to ${this.retryMs} ms)`, error);
  }
}

/**
 * Methods the runtime does not ride out here: `write` (the write batcher does), the heartbeat (made
 * again at its next beat, with the time of that beat: a renewal made late with an old time would
 * renew nothing), and what is not a request.
 */
const NOT_RIDDEN = new Set([
  'write',
  'close',
  'listen',
  'isUnavailable',
  'registerInstance',
  'heartbeat',
  // Read from memory at once: there is nothing to ride out.
  'connections',
]);

/**
 * The store, each of its requests ridden out through `outage` (see StoreOutage), but `write`,
 * which the write batcher rides out batch by batch, the heartbeat, and `registerInstance`, the
 * start's own.
 */
export function ridingOut<S extends Store>(store: S, outage: StoreOutage): S {
  // A store that is never away (memory) is used as it is.
  if (!store.isUnavailable) return store;
  const ridden = Object.create(store) as S;
  const names = new Set<string>();
  for (
    let owner: object | null = store;
    owner && owner !== Object.prototype;
    owner = Object.getPrototypeOf(owner)
  ) {
    for (const name of Object.getOwnPropertyNames(owner)) names.add(name);
  }
  for (const name of names) {
    const method = (store as unknown as Record<string, unknown>)[name];
    if (name === 'constructor' || typeof method !== 'function') continue;
    const call = (args: unknown[]) =>
      (method as (...given: unknown[]) => Promise<unknown>).apply(store, args);
    Object.defineProperty(ridden, name, {
      // Called on the store itself (a class keeps its private fields there), ridden out or not.
      value: NOT_RIDDEN.has(name)
        ? (...args: unknown[]) => call(args)
        : (...args: unknown[]) => outage.ride(() => call(args)),
      writable: true,
      configurable: true,
    });
  }
  return ridden;
}
