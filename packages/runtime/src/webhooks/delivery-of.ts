import type { CallRecord, Notification, WebhookDelivery } from '@baton/contracts';
import type { WebhookEndpoint } from '../options.js';
import { modelVisible } from '../outcome.js';

/** The event type of a delivery's body: a call whose caller was answered `backgrounded` ended. */
export const CALL_ENDED = 'call.ended';

/** The delivery of a notification to its session's endpoint: a Standard Webhooks body, due at once. */
export function deliveryOf(
  notification: Notification,
  record: CallRecord,
  endpoint: WebhookEndpoint,
): WebhookDelivery {
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
