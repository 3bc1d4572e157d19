import { BatonError } from '@baton/contracts';
import type { StoreDeliveries } from '@baton/store';
import { EMPTY } from 'rxjs';
import { WEBHOOK_MESSAGES } from '../messages.js';
import type { Runtime } from '../runtime-api.js';
import type { WebhookDeliveries } from './deliveries.js';
import { shownDelivery } from './targets.js';

/** The runtime's `webhooks`: the deliveries in the store, and this process's attempts (none without `webhooks`). */
export function webhooksOfRuntime(
  store: Pick<StoreDeliveries, 'listDeliveries' | 'countDeliveries'>,
  webhooks: WebhookDeliveries | undefined,
): Runtime['webhooks'] {
  return {
    list: async (filter) => (await store.listDeliveries(filter)).map(shownDelivery),
    count: (filter) => store.countDeliveries(filter),
    deliver: (notification, sends) =>
      webhooks
        ? webhooks.deliver(notification, sends)
        : Promise.reject(new BatonError('invalid_definition', WEBHOOK_MESSAGES.noWebhooks)),
    deliverDue: () => webhooks?.deliverDue() ?? Promise.resolve(0),
    destinationProblem: (url) => (webhooks ? webhooks.destinationProblem(url) : WEBHOOK_MESSAGES.noWebhooks),
    attempts$: webhooks?.attempts$ ?? EMPTY,
  };
}
