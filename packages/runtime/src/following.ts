import type { EventBus } from '@baton/bus';
import type { CallEvent } from '@baton/contracts';
import type { SessionEvent, Store, StoreNotice } from '@baton/store';
import { EMPTY, filter, firstValueFrom, merge, Observable, repeat, Subject, share } from 'rxjs';
import type { BackgroundTimers } from './clock.js';
import { type FollowOptions, followStore } from './follow-store.js';
import { queuedEventOf } from './queued-event.js';

/** The bus's event when it is the one after `seq` (the bus tells of each call's events in order). */
function nextEvent(signal: unknown, seq: number): CallEvent | undefined {
  const event = signal as Partial<CallEvent> | undefined;
  return event?.seq === seq + 1 && typeof event.type === 'string' ? (event as CallEvent) : undefined;
}

/** What to follow: one call's events (by `seq`), or a session's (by `position`); `after` resumes a stream. */
export type FollowTarget = { callId: string; after?: number } | { sessionId: string; after?: number };

export interface FollowingDeps {
  bus: EventBus;
  store: Pick<Store, 'listEvents' | 'listSessionEvents' | 'listen' | 'getCall'>;
  timers: BackgroundTimers;
  pollMs: number;
  /** This runtime's `StoreWrite.writer`: the events it stores reach its followers through its bus. */
  instanceId: string;
}

/**
 * Reading events: what is stored, then what is stored later, each once and in order. The store is
 * the only source; this process's bus and the shared store's notices only say when to read again.
 */
export class Following {
  /** On a shared store: what the other processes committed. */
  readonly #notices = new Subject<StoreNotice>();
  /**
   * The store's `events` topic, listened to while anything here follows a call or a session, and
   * for a poll after: a process that follows nothing is not woken by every commit of the others.
   */
  readonly #heard$: Observable<StoreNotice>;

  constructor(private readonly deps: FollowingDeps) {
    this.#heard$ = new Observable<StoreNotice>((subscriber) => {
      const subscription = this.#notices.subscribe(subscriber);
      const stop = deps.store.listen?.((notice) => this.#hear(notice), { type: 'events' });
      return () => {
        stop?.();
        subscription.unsubscribe();
      };
    }).pipe(share({ resetOnRefCountZero: () => this.#poll() }));
  }

  /**
   * A notice of the shared store, for the followers it concerns. Those of this runtime's own writes
   * are dropped: its bus told of those events.
   */
  #hear(notice: StoreNotice): void {
    if (notice.type === 'events' && notice.writer === this.deps.instanceId) return;
    this.#notices.next(notice);
  }

  complete(): void {
    this.#notices.complete();
  }

  follow(target: FollowTarget, options?: FollowOptions): Observable<CallEvent> | Observable<SessionEvent> {
    const { bus, store } = this.deps;
    if ('callId' in target) {
      const { callId } = target;
      const stored$ = merge(
        bus.call$(callId),
        this.storedElsewhere((ids) => ids.callIds.includes(callId)),
        this.ticks(),
      );
      const read = async (seq: number, limit: number) => {
        const events = await store.listEvents(callId, seq + 1, limit);
        return seq === 0 && events.length === 0 ? this.#waitingToBeClaimed(callId) : events;
      };
      const readFirst = !options?.fresh;
      return followStore(
        stored$,
        read,
        (event) => event.seq,
        target.after ?? 0,
        readFirst,
        options,
        nextEvent,
      );
    }
    const { sessionId } = target;
    const stored$ = merge(
      bus.session$(sessionId),
      this.storedElsewhere((ids) => ids.sessionIds.includes(sessionId)),
      this.ticks(),
    );
    const read = (position: number, limit: number) => store.listSessionEvents(sessionId, position, limit);
    return followStore(
      stored$,
      read,
      (stored) => stored.position,
      target.after ?? 0,
      !options?.fresh,
      options,
    );
  }

  /**
   * A call with no event stored: one that a client stored for the workers, whose `queued` event the
   * worker that claims it stores (see `queuedEventOf`). Until then its record shows it queued.
   */
  async #waitingToBeClaimed(callId: string): Promise<CallEvent[]> {
    const record = await this.deps.store.getCall(callId);
    return record?.status === 'queued' ? [queuedEventOf(record)] : [];
  }

  /**
   * Events that other processes stored, as the shared store tells of them; and `listening`, when
   * what was stored before may have gone untold.
   */
  storedElsewhere(about: (notice: Extract<StoreNotice, { type: 'events' }>) => boolean): Observable<unknown> {
    return this.#heard$.pipe(
      filter((notice) => notice.type === 'listening' || (notice.type === 'events' && about(notice))),
    );
  }

  /**
   * On a shared store, followers also read every poll: an event whose notice was lost (a dropped
   * LISTEN connection) comes late, but comes.
   */
  ticks(): Observable<unknown> {
    return this.deps.store.listen ? this.#poll().pipe(repeat()) : EMPTY;
  }

  /**
   * Resolves once `heard` does (the store said it listens to a topic), or after a poll interval if
   * it never does (its LISTEN connection cannot be made: the polls read meanwhile); at once on a
   * store that is not shared.
   */
  heardOrPolled(heard: Promise<void>): Promise<void> {
    return Promise.race([heard, firstValueFrom(this.ticks(), { defaultValue: undefined })]).then(
      () => undefined,
    );
  }

  /** One poll interval on the runtime's timers. */
  #poll(): Observable<unknown> {
    const { timers, pollMs } = this.deps;
    return new Observable((subscriber) => {
      const handle = timers.background(() => {
        subscriber.next(undefined);
        subscriber.complete();
      }, pollMs);
      return () => timers.cancelBackground(handle);
    });
  }
}
