import type { CallEvent, RuntimeFailure } from '@baton/contracts';
import { Observable, Subject } from 'rxjs';

/**
 * The runtime's event bus. `events$` carries every event; `call$` and `session$` are routed by key,
 * so publishing costs one map lookup per key, not one filter per subscriber.
 */
export class EventBus {
  readonly #all = new Subject<CallEvent>();
  readonly #byCall = new Map<string, Subject<CallEvent>>();
  readonly #bySession = new Map<string, Subject<CallEvent>>();

  readonly #failures = new Subject<RuntimeFailure>();

  /** Every event of every call. */
  readonly events$: Observable<CallEvent> = this.#all.asObservable();

  /** Every failure the runtime caught and handled (see `RuntimeFailure`). */
  readonly failures$: Observable<RuntimeFailure> = this.#failures.asObservable();

  publishFailure(failure: RuntimeFailure): void {
    this.#failures.next(failure);
  }

  publish(event: CallEvent): void {
    if (this.#all.observed) this.#all.next(event);
    this.#byCall.get(event.callId)?.next(event);
    this.#bySession.get(event.sessionId)?.next(event);
  }

  /** The events of one call, from now on. */
  call$(callId: string): Observable<CallEvent> {
    return routed(this.#byCall, callId);
  }

  /** The events of every call of one session, from now on. */
  session$(sessionId: string): Observable<CallEvent> {
    return routed(this.#bySession, sessionId);
  }

  /** How many routing keys have a live subscriber (0 once everyone has unsubscribed). */
  routeCount(): number {
    return this.#byCall.size + this.#bySession.size;
  }

  /** Completes every stream: subscribers see `complete`, and the bus holds no one. */
  complete(): void {
    this.#all.complete();
    this.#failures.complete();
    for (const subject of this.#byCall.values()) subject.complete();
    for (const subject of this.#bySession.values()) subject.complete();
    this.#byCall.clear();
    this.#bySession.clear();
  }
}

/** A stream for one key whose subject exists only while someone listens. */
function routed(routes: Map<string, Subject<CallEvent>>, key: string): Observable<CallEvent> {
  return new Observable<CallEvent>((subscriber) => {
    let subject = routes.get(key);
    if (!subject) {
      subject = new Subject<CallEvent>();
      routes.set(key, subject);
    }
    const subscription = subject.subscribe(subscriber);
    const route = subject;
    return () => {
      subscription.unsubscribe();
      if (!route.observed && routes.get(key) === route) routes.delete(key);
    };
  });
}
