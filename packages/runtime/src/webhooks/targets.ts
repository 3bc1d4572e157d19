import { BatonError, type Notification, type WebhookDelivery } from '@baton/contracts';
import { WEBHOOK_MESSAGES } from '../messages.js';
import type { WebhookEndpoint, WebhookOptions } from '../options.js';
import { checkUrl } from './endpoints.js';

/** Where one attempt of a delivery goes, and what signs it. */
export interface WebhookTarget {
  url: string;
  secret: string;
  /** Headers of the delivery's own, beside those every attempt has. */
  headers: Record<string, string>;
}

/**
 * A delivery for a destination of its own, asked for by `webhooks.deliver`: one per destination
 * of a notification (an A2A task's push notification configs, say), each with the body that
 * destination takes.
 */
export interface WebhookSend {
  /** Names the destination among the notification's: the delivery's id is made of it. */
  key: string;
  /** An `http://` or `https://` URL, checked against `webhooks.allow` at each attempt. */
  url: string;
  /** The JSON body every attempt sends, as it is signed. */
  body: string;
  /** Headers beside the signature's (a `content-type` replaces `application/json`). */
  headers?: Record<string, string>;
}

/** The endpoint of a session's notifications, as the options give it. */
export function endpointOf(options: Pick<WebhookOptions, 'endpoint'>, sessionId: string) {
  const { endpoint } = options;
  return typeof endpoint === 'function' ? endpoint(sessionId) : endpoint;
}

/** The secret of deliveries made for a destination of their own. */
export function destinationSecretOf(options: Pick<WebhookOptions, 'endpoint' | 'secret'>) {
  return options.secret ?? (typeof options.endpoint === 'object' ? options.endpoint.secret : undefined);
}

/** Where a delivery's attempt goes: its own destination, or its session's endpoint (undefined: none any more). */
export function targetOf(
  options: Pick<WebhookOptions, 'endpoint' | 'secret'>,
  delivery: Pick<WebhookDelivery, 'sessionId' | 'destination'>,
): WebhookTarget | undefined {
  if (delivery.destination) {
    const secret = destinationSecretOf(options);
    return secret === undefined
      ? undefined
      : { url: delivery.destination.url, secret, headers: delivery.destination.headers ?? {} };
  }
  const endpoint: WebhookEndpoint | undefined = endpointOf(options, delivery.sessionId);
  return endpoint && { url: endpoint.url, secret: endpoint.secret, headers: {} };
}

/** The delivery of a notification to a destination of its own, due at once. */
export function sentDelivery(notification: Notification, send: WebhookSend, at: number): WebhookDelivery {
  return {
    id: `msg_${notification.id}_${send.key}`,
    notificationId: notification.id,
    callId: notification.callId,
    sessionId: notification.sessionId,
    status: 'pending',
    body: send.body,
    attempts: 0,
    nextAt: at,
    createdAt: at,
    destination: {
      url: send.url,
      // One spelling of each name: an attempt's own headers replace these by name.
      ...(send.headers
        ? {
            headers: Object.fromEntries(
              Object.entries(send.headers).map(([name, value]) => [name.toLowerCase(), value]),
            ),
          }
        : {}),
    },
  };
}

/** A delivery as it may be shown: the values of its own headers (tokens, credentials) hidden. */
export function shownDelivery(delivery: WebhookDelivery): WebhookDelivery {
  const headers = delivery.destination?.headers;
  if (!delivery.destination || !headers) return delivery;
  const hidden = Object.fromEntries(
    Object.entries(headers).map(([name, value]) => [name, name === 'content-type' ? value : '[redacted]']),
  );
  return { ...delivery, destination: { ...delivery.destination, headers: hidden } };
}

/** The headers of one attempt: its own may set its content type, never the signature's. */
export function attemptHeaders(id: string, target: WebhookTarget, at: number, signature: string) {
  return {
    'content-type': 'application/json',
    ...target.headers,
    'user-agent': 'Baton-Webhooks',
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at / 1_000)),
    'webhook-signature': signature,
  };
}

/** Refuses sends that cannot be delivered: no secret signs them, or a URL that is not http(s). */
export function checkSends(
  options: Pick<WebhookOptions, 'endpoint' | 'secret'>,
  sends: readonly WebhookSend[],
) {
  if (destinationSecretOf(options) === undefined)
    throw new BatonError('invalid_definition', WEBHOOK_MESSAGES.noSecret);
  for (const send of sends) checkUrl(send.url);
}
