import {
  BatonError,
  type CallEvent,
  type CallRecord,
  type Notification,
  type WebhookDelivery,
} from '@baton/contracts';
import type { Store } from '@baton/store';
import { filter, type Observable, Subject, type Subscription } from 'rxjs';
import { Webhook } from 'standardwebhooks';
import type { Clock } from '../clock.js';
import {
  DEFAULT_WEBHOOK_CONCURRENCY,
  DEFAULT_WEBHOOK_PER_DESTINATION,
  DEFAULT_WEBHOOK_POLL_MS,
  DEFAULT_WEBHOOK_RETRY_SCHEDULE_MS,
  DEFAULT_WEBHOOK_TIMEOUT_MS,
  WEBHOOK_BATCH,
} from '../defaults.js';
import type { Failures, Logger } from '../log.js';
import { WEBHOOK_MESSAGES } from '../messages.js';
import type { WebhookOptions } from '../options.js';
import { deliveryOf } from './delivery-of.js';
import { type DestinationRules, refusedLiteral } from './destinations.js';
import { checkEndpoint, checkSecret, checkUrl, rulesOf } from './endpoints.js';
import { type PostOutcome, postWebhook } from './post.js';
import { redactedUrl } from './redacted-url.js';
import { settledAfter } from './settled.js';
import {
  attemptHeaders,
  checkSends,
  endpointOf,
  sentDelivery,
  targetOf,
  type WebhookSend,
} from './targets.js';

export interface WebhookDeliveriesDeps {
  options: WebhookOptions;
  store: Pick<Store, 'claimDeliveries' | 'settleDelivery' | 'write'>;
  clock: Clock;
  failures: Failures;
  /** Where a failed attempt is told, at warn, with when it is tried next. */
  logger: Pick<Logger, 'warn'>;
  /** The process that holds a delivery while it attempts it. */
  instanceId: string;
  /** Every stored event: a notification's is the sign that its delivery is stored and due. */
  events$: Observable<CallEvent>;
  /** Runs a task every `ms` on the runtime's clock until the runtime closes. */
  every: (ms: number, op: string, task: () => Promise<unknown>) => void;
  /** Runs a task once after `ms` on the runtime's clock, unless the runtime closes first. */
  later: (ms: number, task: () => void) => void;
}

/** A destination's attempts under way (when each began), and the deliveries claimed for it that wait for one. */
interface Destination {
  running: number[];
  waiting: Array<{ claimedAt: number; run: () => void; release: (dueAt: number) => void }>;
}

/**
 * A destination whose attempt under way began this long ago has stalled: what is claimed for it
 * meanwhile is put back until that attempt's time is up, instead of waiting here.
 */
const STALLED_MS = 1_000;

/**
 * Webhook deliveries: a detached call's notification is written with its delivery, in the same
 * batch; the delivery is attempted at once, then again on the retry schedule, by whichever process
 * claims it (one at a time: the store holds it for the claimer), across restarts, until an answer
 * in 2xx or until its tries run out. Each attempt is signed to the Standard Webhooks spec, with the
 * delivery's id as `webhook-id` on every attempt.
 *
 * Attempts run side by side, bounded in all and per destination (a receiver's host): one that
 * hangs holds only its own share. A delivery claimed for a destination whose share is taken waits
 * for it here, a few at most; beyond those it is put back for later, so that a hanging receiver's
 * backlog neither holds claims nor the others' room.
 */
export class WebhookDeliveries {
  readonly #deps: WebhookDeliveriesDeps;
  readonly #schedule: readonly number[];
  readonly #timeoutMs: number;
  readonly #rules: DestinationRules;
  readonly #total: number;
  readonly #perDestination: number;
  readonly #signers = new Map<string, Webhook>();
  readonly #attempts = new Subject<WebhookDelivery>();
  /** Aborts the attempts under way: the process stops. */
  readonly #stop = new AbortController();
  #closing = false;
  readonly #heard: Subscription;
  /** The claims under way, and the one asked for while they run. */
  #running: Promise<Array<Promise<void>>> | undefined;
  #queued: Promise<Array<Promise<void>>> | undefined;
  /** Deliveries held here, attempted or waiting to be, by id. */
  readonly #held = new Map<string, WebhookDelivery>();
  readonly #destinations = new Map<string, Destination>();
  /** Attempts under way, and those claimed that wait for their destination. */
  #inFlight = new Set<Promise<void>>();

  constructor(deps: WebhookDeliveriesDeps) {
    this.#deps = deps;
    const { options } = deps;
    this.#schedule = options.retryScheduleMs ?? DEFAULT_WEBHOOK_RETRY_SCHEDULE_MS;
    if (!this.#schedule.every((wait) => Number.isFinite(wait) && wait >= 0)) {
      throw new BatonError('invalid_definition', WEBHOOK_MESSAGES.badSchedule);
    }
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_WEBHOOK_TIMEOUT_MS;
    this.#rules = rulesOf(options);
    this.#total = options.concurrency?.total ?? DEFAULT_WEBHOOK_CONCURRENCY;
    this.#perDestination = options.concurrency?.perDestination ?? DEFAULT_WEBHOOK_PER_DESTINATION;
    if (typeof options.endpoint === 'object') checkEndpoint(options.endpoint, this.#rules);
    if (options.secret !== undefined) checkSecret(options.secret);
    this.#heard = deps.events$
      .pipe(filter((event) => event.type === 'notification'))
      .subscribe(() => this.#kick());
    // The poll claims and starts what is due; it does not wait for the attempts, so that a
    // receiver that hangs holds up neither the next poll nor the release of what waits for it.
    deps.every(options.pollMs ?? DEFAULT_WEBHOOK_POLL_MS, 'webhook delivery', () => this.#claimSoon());
  }

  /**
   * Why a destination given at run time (an A2A push config) would be refused, as far as can be
   * told before its name is looked up: told to whoever gives it, not found at the call's end.
   */
  destinationProblem(url: string): string | undefined {
    try {
      return refusedLiteral(checkUrl(url), this.#rules);
    } catch (error) {
      return (error as Error).message;
    }
  }

  get attempts$(): Observable<WebhookDelivery> {
    return this.#attempts.asObservable();
  }

  /** The delivery of a notification, when its session has a webhook: written in the notification's batch. */
  deliveryOf(notification: Notification, record: CallRecord): WebhookDelivery | undefined {
    const endpoint = endpointOf(this.#deps.options, notification.sessionId);
    return endpoint && deliveryOf(notification, record, endpoint);
  }

  /** Stores a delivery of a notification for each destination of its own (see `Runtime.webhooks.deliver`). */
  async deliver(notification: Notification, sends: readonly WebhookSend[]): Promise<void> {
    if (sends.length === 0) return;
    checkSends(this.#deps.options, sends);
    const at = this.#deps.clock.now();
    await this.#deps.store.write({ deliveries: sends.map((send) => sentDelivery(notification, send, at)) });
    this.#kick();
  }

  /** A delivery was stored, or room was made: claim what is due now, or right after the claims under way. */
  #kick(): void {
    if (this.#closing) return;
    this.#claimSoon().catch(this.#deps.failures.on('webhook delivery'));
  }

  /**
   * Claims every delivery due now that no other process holds, as far as there is room, and
   * resolves once their attempts have ended, with how many were attempted. Claims asked for while
   * others run follow them (those asked for meanwhile share them): what became due is not missed.
   */
  async deliverDue(): Promise<number> {
    const attempts = await this.#claimSoon();
    // Each attempt resolves: a failure under it is reported where it happens.
    await Promise.all(attempts);
    return attempts.length;
  }

  #claimSoon(): Promise<Array<Promise<void>>> {
    if (this.#queued) return this.#queued;
    const running = this.#running;
    if (!running) return this.#startClaims();
    const queued = running.then(
      () => this.#startClaims(),
      () => this.#startClaims(),
    );
    this.#queued = queued;
    return queued;
  }

  #startClaims(): Promise<Array<Promise<void>>> {
    this.#queued = undefined;
    const claims = this.#claim().finally(() => {
      if (this.#running === claims) this.#running = undefined;
    });
    this.#running = claims;
    return claims;
  }

  /** How long a claim holds a delivery: as long as an attempt may take, and then some. */
  get #leaseMs(): number {
    return this.#timeoutMs * 2;
  }

  /** Claims due deliveries while there is room, and starts (or queues) an attempt of each. */
  async #claim(): Promise<Array<Promise<void>>> {
    const { store, clock, instanceId } = this.#deps;
    const started: Array<Promise<void>> = [];
    this.#releaseStalled();
    for (;;) {
      const room = Math.min(WEBHOOK_BATCH, this.#total - this.#held.size);
      if (this.#closing || room <= 0) return started;
      // A process that dies mid-attempt leaves the delivery to another once its claim has passed.
      const claimed = await store.claimDeliveries(instanceId, clock.now(), this.#leaseMs, room);
      const putBack: Array<Promise<void>> = [];
      for (const delivery of claimed) {
        // Held here already: its claim was taken again after its lease ran out while it waited.
        if (this.#held.has(delivery.id)) continue;
        const taken = this.#take(delivery);
        if (typeof taken === 'number') putBack.push(this.#putBack(delivery, taken));
        else started.push(taken);
      }
      await Promise.all(putBack);
      if (claimed.length < room) return started;
    }
  }

  /** The destination a delivery goes to: its receiver's host ('' for one with no webhook any more). */
  #destinationKey(delivery: WebhookDelivery): string {
    const url = targetOf(this.#deps.options, delivery)?.url;
    if (url === undefined) return '';
    try {
      return new URL(url).host.toLowerCase();
    } catch {
      return url;
    }
  }

  /**
   * Starts the attempt of a delivery claimed here, or queues it behind its destination's attempts
   * under way (a few, while they do not stall). Otherwise, when it is due again: once the oldest
   * attempt of a stalled destination has had its time, or in a second.
   */
  #take(delivery: WebhookDelivery): Promise<void> | number {
    const now = this.#deps.clock.now();
    const key = this.#destinationKey(delivery);
    let destination = this.#destinations.get(key);
    if (!destination) {
      destination = { running: [], waiting: [] };
      this.#destinations.set(key, destination);
    }
    const own = destination;
    const oldest = Math.min(...own.running);
    const stalled = own.running.length > 0 && now - oldest >= STALLED_MS;
    const full = own.running.length >= this.#perDestination;
    if (full && (stalled || own.waiting.length >= this.#perDestination * 3)) {
      return stalled ? oldest + this.#timeoutMs : now + STALLED_MS;
    }
    this.#held.set(delivery.id, delivery);
    // A failure of the store under an attempt is reported; the delivery is tried again once its
    // claim has passed.
    const failed = this.#deps.failures.on('webhook delivery', delivery.callId);
    const attempt = new Promise<void>((resolve) => {
      const reported = (error: unknown) => {
        failed(error);
        resolve();
      };
      const run = () => {
        const began = this.#deps.clock.now();
        own.running.push(began);
        this.#attempt(delivery)
          .then(resolve, reported)
          .finally(() => {
            own.running.splice(own.running.indexOf(began), 1);
            this.#held.delete(delivery.id);
            this.#next(key, own);
            // Room was made: what waits in the store may be claimed now.
            this.#kick();
          });
      };
      const release = (dueAt: number) => {
        this.#held.delete(delivery.id);
        this.#putBack(delivery, dueAt).then(resolve, reported);
      };
      if (!full) run();
      else own.waiting.push({ claimedAt: now, run, release });
    });
    this.#inFlight.add(attempt);
    const forget = () => this.#inFlight.delete(attempt);
    attempt.then(forget, forget);
    return attempt;
  }

  /** What waits here for a destination that stalled is given back: it holds no room meanwhile. */
  #releaseStalled(): void {
    const now = this.#deps.clock.now();
    for (const destination of this.#destinations.values()) {
      const oldest = Math.min(...destination.running);
      if (destination.running.length === 0 || now - oldest < STALLED_MS) continue;
      for (const waiting of destination.waiting.splice(0)) waiting.release(oldest + this.#timeoutMs);
    }
  }

  /**
   * Starts the next delivery waiting for this destination. One that waited past half its claim is
   * given back instead, due at once: another process may take it, rather than both attempting it.
   */
  #next(key: string, destination: Destination): void {
    for (let next = destination.waiting.shift(); next; next = destination.waiting.shift()) {
      if (this.#deps.clock.now() - next.claimedAt < this.#leaseMs / 2) {
        next.run();
        return;
      }
      next.release(this.#deps.clock.now());
    }
    if (destination.running.length === 0) this.#destinations.delete(key);
  }

  /** Gives a claimed delivery back, unattempted, due at `at`: its claim ends now. */
  async #putBack(delivery: WebhookDelivery, at: number): Promise<void> {
    await this.#deps.store.settleDelivery({ ...delivery, nextAt: at }, this.#deps.instanceId);
  }

  #signer(secret: string): Webhook {
    const signer = this.#signers.get(secret) ?? new Webhook(secret);
    this.#signers.set(secret, signer);
    return signer;
  }

  async #attempt(delivery: WebhookDelivery): Promise<void> {
    const { store, clock, instanceId, failures, logger } = this.#deps;
    // Stopped before it began (it waited for its destination): it is given back for the next process.
    if (this.#closing) {
      await this.#putBack(delivery, clock.now());
      return;
    }
    const at = clock.now();
    const target = targetOf(this.#deps.options, delivery);
    let url = target?.url ?? '';
    let outcome: PostOutcome;
    if (!target) {
      outcome = {
        error: delivery.destination ? WEBHOOK_MESSAGES.noSecret : WEBHOOK_MESSAGES.noEndpoint,
        refused: true,
      };
    } else {
      try {
        url = checkEndpoint(target, this.#rules).href;
        const signature = this.#signer(target.secret).sign(delivery.id, new Date(at), delivery.body);
        const headers = attemptHeaders(delivery.id, target, at, signature);
        outcome = await postWebhook(new URL(url), headers, delivery.body, {
          rules: this.#rules,
          timeoutMs: this.#timeoutMs,
          signal: this.#stop.signal,
        });
      } catch (error) {
        outcome = { error: (error as Error).message, refused: true };
      }
    }
    // Cut short by the process stopping: not an attempt; the next process takes it at once.
    if (this.#stop.signal.aborted) {
      await this.#putBack(delivery, clock.now());
      return;
    }
    const shownUrl = url === '' ? url : redactedUrl(url);
    const { settled, failure } = settledAfter(delivery, outcome, at, shownUrl, this.#schedule);
    if (settled.status === 'failed') {
      failures.report(
        'webhook delivery',
        new Error(WEBHOOK_MESSAGES.givenUp(delivery.id, settled.attempts, failure)),
        delivery.callId,
      );
    } else if (settled.status === 'pending') {
      logger.warn(
        {
          delivery: delivery.id,
          callId: delivery.callId,
          destination: shownUrl,
          attempt: settled.attempts,
          ...('status' in outcome ? { status: outcome.status } : { error: outcome.error }),
          nextAt: new Date(settled.nextAt).toISOString(),
        },
        WEBHOOK_MESSAGES.attemptFailed(shownUrl, failure, settled.nextAt - at),
      );
    }
    if (!(await store.settleDelivery(settled, instanceId))) return;
    this.#attempts.next(settled);
    // Tried again here when it is due; the poll is for those another process left.
    if (settled.status === 'pending') {
      this.#deps.later(Math.max(0, settled.nextAt - clock.now()), () => this.#kick());
    }
  }

  /**
   * Stops: nothing more is claimed; the attempts under way have `graceMs` to end (a call that
   * ended during a drain is delivered before the exit), then are cut short. Every delivery still
   * held here is given back, due at once, so that the next process takes it without waiting out
   * its claim.
   */
  async close(graceMs = 0): Promise<void> {
    this.#closing = true;
    this.#heard.unsubscribe();
    await Promise.allSettled([this.#running, this.#queued]);
    const { clock } = this.#deps;
    if (graceMs > 0 && this.#inFlight.size > 0) {
      let handle: unknown;
      await Promise.race([
        Promise.allSettled([...this.#inFlight]),
        new Promise<void>((resolve) => {
          handle = clock.setTimeout(resolve, graceMs);
        }),
      ]);
      clock.clearTimeout(handle);
    }
    this.#stop.abort();
    await Promise.allSettled([...this.#inFlight]);
    this.#attempts.complete();
  }
}
