import type { WebhookDelivery } from '@baton/contracts';
import type { PostOutcome } from './post.js';

/**
 * A receiver that answers 410 Gone says that it takes no more deliveries: Standard Webhooks
 * (Svix) stop there, and so does this, rather than trying again for the whole schedule.
 */
const GONE = 410;

/**
 * What an attempt that began at `at` leaves its delivery: delivered on a 2xx; failed once its
 * tries run out, or on a refusal or a 410; else pending, due again by the schedule, which counts
 * from the attempt's start, not from when its answer came. `failure` says how the attempt failed.
 */
export function settledAfter(
  delivery: WebhookDelivery,
  outcome: PostOutcome,
  at: number,
  shownUrl: string,
  schedule: readonly number[],
): { settled: WebhookDelivery; failure: string } {
  const attempts = delivery.attempts + 1;
  const lastAttempt = {
    at,
    url: shownUrl,
    ...('status' in outcome ? { status: outcome.status } : { error: outcome.error }),
  };
  const settled: WebhookDelivery = { ...delivery, attempts, lastAttempt };
  const failure = 'status' in outcome ? `HTTP ${outcome.status}` : outcome.error;
  const wait = schedule[attempts - 1];
  if ('status' in outcome && outcome.status >= 200 && outcome.status < 300) {
    settled.status = 'delivered';
    settled.deliveredAt = at;
  } else if (
    wait === undefined ||
    ('refused' in outcome && outcome.refused) ||
    ('status' in outcome && outcome.status === GONE)
  ) {
    settled.status = 'failed';
  } else {
    settled.nextAt = at + wait;
  }
  return { settled, failure };
}
