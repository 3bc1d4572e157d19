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
import { modelVisible } from '../call/replies.js';
import type { Clock } from '../clock.js';
import {
  DEFAULT_WEBHOOK_POLL_MS,
  DEFAULT_WEBHOOK_RETRY_SCHEDULE_MS,
  DEFAULT_WEBHOOK_TIMEOUT_MS,
  WEBHOOK_BATCH,
} from '../defaults.js';
import type { Failures } from '../log.js';
import { WEBHOOK_MESSAGES } from '../messages.js';
import type { WebhookEndpoint, WebhookOptions } from '../options.js';
import { type DestinationRules, refusedLiteral } from './destinations.js';
import { type PostOutcome, postWebhook } from './post.js';

/**
 * A receiver that answers 410 Gone says that it takes no more deliveries: Standard Webhooks
 * (Svix) stop there, and so does this, rather than trying again for the whole schedule.
 */
const GONE = 410;

/** The event type of a delivery's body: a call whose caller was answered `backgrounded` ended. */
export const CALL_ENDED = 'call.ended';

const SECRET = /^whsec_([A-Za-z0-9+/]+={0,2})$/;

function checkSecret(secret: string): void {
  const base64 = SECRET.exec(secret)?.[1];
  const bytes = base64 === undefined ? 0 : Buffer.from(base64, 'base64').length;
  if (bytes < 24 || bytes > 64) throw new BatonError('invalid_definition', WEBHOOK_MESSAGES.badSecret);
}

function checkUrl(url: string): URL {
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    parsed = undefined;
  }
  if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) {
    throw new BatonError('invalid_definition', WEBHOOK_MESSAGES.badUrl(url));
  }
  return parsed;
}

/**
 * Why an endpoint cannot be used (a URL that is not http(s), a secret not of Standard Webhooks'
 * form, a destination written as an address the rules refuse), or undefined when it can, as far
 * as can be told before its name is looked up. A host checks its configuration with it at start.
 */
export function webhookEndpointProblem(
  endpoint: WebhookEndpoint,
  allow: WebhookOptions['allow'] = {},
): string | undefined {
  try {
    checkEndpoint(endpoint, { loopback: allow.loopback ?? false, private: allow.private ?? false });
    return undefined;
  } catch (error) {
    return (error as Error).message.replace(/^createRuntime: webhooks: /, '');
  }
}

/** An endpoint that can be used: a URL, a secret of the right form, and a destination the rules allow. */
function checkEndpoint(endpoint: WebhookEndpoint, rules: DestinationRules): URL {
  const url = checkUrl(endpoint.url);
  checkSecret(endpoint.secret);
  const refused = refusedLiteral(url, rules);
  if (refused) throw new BatonError('invalid_definition', `createRuntime: webhooks: ${refused}`);
  return url;
}

export interface WebhookDeliveriesDeps {
  options: WebhookOptions;
  store: Pick<Store, 'claimDeliveries' | 'settleDelivery'>;
  clock: Clock;
  failures: Failures;
  /** The process that holds a delivery while it attempts it. */
  instanceId: string;
  /** Every stored event: a notification's is the sign that its delivery is stored and due. */
  events$: Observable<CallEvent>;
  /** Runs a task every `ms` on the runtime's clock until the runtime closes. */
  every: (ms: number, op: string, task: () => Promise<unknown>) => void;
  /** Runs a task once after `ms` on the runtime's clock, unless the runtime closes first. */
  later: (ms: number, task: () => void) => void;
}

/**
 * Webhook deliveries: a detached call's notification is written with its delivery, in the same
 * batch; the delivery is attempted at once, then again on the retry schedule, by whichever process
 * claims it (one at a time: the store holds it for the claimer), across restarts, until an answer
 * in 2xx or until its tries run out. Each attempt is signed to the Standard Webhooks spec, with the
 * delivery's id as `webhook-id` on every attempt.
 */
export class WebhookDeliveries {
  readonly #deps: WebhookDeliveriesDeps;
  readonly #schedule: readonly number[];
  readonly #timeoutMs: number;
  readonly #rules: DestinationRules;
  readonly #signers = new Map<string, Webhook>();
  readonly #attempts = new Subject<WebhookDelivery>();
  readonly #stop = new AbortController();
  readonly #heard: Subscription;
  /** The round of attempts under way, and the one asked for while it runs. */
  #running: Promise<number> | undefined;
  #queued: Promise<number> | undefined;

  constructor(deps: WebhookDeliveriesDeps) {
    this.#deps = deps;
    const { options } = deps;
    this.#schedule = options.retryScheduleMs ?? DEFAULT_WEBHOOK_RETRY_SCHEDULE_MS;
    if (!this.#schedule.every((wait) => Number.isFinite(wait) && wait >= 0)) {
      throw new BatonError('invalid_definition', WEBHOOK_MESSAGES.badSchedule);
    }
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_WEBHOOK_TIMEOUT_MS;
    this.#rules = { loopback: options.allow?.loopback ?? false, private: options.allow?.private ?? false };
    if (typeof options.endpoint !== 'function') checkEndpoint(options.endpoint, this.#rules);
    this.#heard = deps.events$
      .pipe(filter((event) => event.type === 'notification'))
      .subscribe(() => this.#kick());
    deps.every(options.pollMs ?? DEFAULT_WEBHOOK_POLL_MS, 'webhook delivery', () => this.deliverDue());
  }

  get attempts$(): Observable<WebhookDelivery> {
    return this.#attempts.asObservable();
  }

  #endpointOf(sessionId: string): WebhookEndpoint | undefined {
    const { endpoint } = this.#deps.options;
    return typeof endpoint === 'function' ? endpoint(sessionId) : endpoint;
  }

  /** The delivery of a notification, when its session has a webhook: written in the notification's batch. */
  deliveryOf(notification: Notification, record: CallRecord): WebhookDelivery | undefined {
    const endpoint = this.#endpointOf(notification.sessionId);
    if (!endpoint) return undefined;
    const show = endpoint.showId ?? ((id: string) => id);
    const error = notification.outcome === 'succeeded' || !record.error ? null : modelVisible(record.error);
    const body = JSON.stringify({
      type: CALL_ENDED,
      timestamp: new Date(notification.createdAt).toISOString(),
      data: {
        notificationId: notification.id,
        callId: show(notification.callId),
        sessionId: show(notification.sessionId),
        tool: notification.toolName,
        status: notification.outcome,
        output: notification.outcome === 'succeeded' ? (record.output ?? null) : null,
        error,
        title: notification.title,
        body: notification.body,
        scheduling: notification.scheduling,
      },
    });
    return {
      id: `msg_${notification.id}`,
      notificationId: notification.id,
      callId: notification.callId,
      sessionId: notification.sessionId,
      status: 'pending',
      body,
      attempts: 0,
      nextAt: notification.createdAt,
      createdAt: notification.createdAt,
    };
  }

  /** A delivery was stored: try it now, or right after the round under way. */
  #kick(): void {
    this.deliverDue().catch(this.#deps.failures.on('webhook delivery'));
  }

  /**
   * Attempts every delivery due now that no other process holds; resolves with how many. A round
   * asked for while one runs follows it (those asked for meanwhile share it): what became due
   * during the round is not missed.
   */
  deliverDue(): Promise<number> {
    if (this.#queued) return this.#queued;
    const running = this.#running;
    if (!running) return this.#startRound();
    const queued = running.then(
      () => this.#startRound(),
      () => this.#startRound(),
    );
    this.#queued = queued;
    return queued;
  }

  #startRound(): Promise<number> {
    this.#queued = undefined;
    const round = this.#deliverRounds().finally(() => {
      if (this.#running === round) this.#running = undefined;
    });
    this.#running = round;
    return round;
  }

  async #deliverRounds(): Promise<number> {
    const { store, clock, instanceId } = this.#deps;
    // Held for as long as an attempt may take, and then some: a process that dies mid-attempt
    // leaves it to another once that has passed.
    const leaseMs = this.#timeoutMs * 2;
    let attempted = 0;
    for (;;) {
      if (this.#stop.signal.aborted) return attempted;
      const claimed = await store.claimDeliveries(instanceId, clock.now(), leaseMs, WEBHOOK_BATCH);
      await Promise.all(claimed.map((delivery) => this.#attempt(delivery)));
      attempted += claimed.length;
      if (claimed.length < WEBHOOK_BATCH) return attempted;
    }
  }

  #signer(secret: string): Webhook {
    let signer = this.#signers.get(secret);
    if (!signer) {
      signer = new Webhook(secret);
      this.#signers.set(secret, signer);
    }
    return signer;
  }

  async #attempt(delivery: WebhookDelivery): Promise<void> {
    const { store, clock, instanceId, failures } = this.#deps;
    const at = clock.now();
    const endpoint = this.#endpointOf(delivery.sessionId);
    let url = endpoint?.url ?? '';
    let outcome: PostOutcome;
    if (!endpoint) outcome = { error: WEBHOOK_MESSAGES.noEndpoint, refused: true };
    else {
      try {
        url = checkEndpoint(endpoint, this.#rules).href;
        const timestamp = new Date(at);
        const headers = {
          'content-type': 'application/json',
          'user-agent': 'Baton-Webhooks',
          'webhook-id': delivery.id,
          'webhook-timestamp': String(Math.floor(at / 1_000)),
          'webhook-signature': this.#signer(endpoint.secret).sign(delivery.id, timestamp, delivery.body),
        };
        outcome = await postWebhook(new URL(url), headers, delivery.body, {
          rules: this.#rules,
          timeoutMs: this.#timeoutMs,
          signal: this.#stop.signal,
        });
      } catch (error) {
        outcome = { error: (error as Error).message, refused: true };
      }
    }
    if (this.#stop.signal.aborted) return;
    const attempts = delivery.attempts + 1;
    const delivered = 'status' in outcome && outcome.status >= 200 && outcome.status < 300;
    const lastAttempt = {
      at,
      url,
      ...('status' in outcome ? { status: outcome.status } : { error: outcome.error }),
    };
    const settled: WebhookDelivery = { ...delivery, attempts, lastAttempt };
    const wait = this.#schedule[attempts - 1];
    if (delivered) {
      settled.status = 'delivered';
      settled.deliveredAt = at;
    } else if (
      wait === undefined ||
      ('refused' in outcome && outcome.refused) ||
      ('status' in outcome && outcome.status === GONE)
    ) {
      settled.status = 'failed';
      const last = 'status' in outcome ? `HTTP ${outcome.status}` : outcome.error;
      failures.report(
        'webhook delivery',
        new Error(WEBHOOK_MESSAGES.givenUp(delivery.id, attempts, last)),
        delivery.callId,
      );
    } else {
      settled.nextAt = at + wait;
    }
    if (!(await store.settleDelivery(settled, instanceId))) return;
    this.#attempts.next(settled);
    // Tried again here when it is due; the poll is for those another process left.
    if (settled.status === 'pending') this.#deps.later(wait ?? 0, () => this.#kick());
  }

  /** Stops attempting: an attempt under way is abandoned, and its delivery tried again later. */
  async close(): Promise<void> {
    this.#stop.abort();
    this.#heard.unsubscribe();
    await Promise.allSettled([this.#running, this.#queued]);
    this.#attempts.complete();
  }
}
