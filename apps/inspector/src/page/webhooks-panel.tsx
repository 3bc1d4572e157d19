import type { CallEvent, WebhookDelivery } from '@baton/contracts';
import { useEffect, useState } from 'preact/hooks';
import { follow, getJson, Unauthorized } from './api.js';
import { formatTime } from './format.js';

/** The deliveries the panel shows, newest first. */
const SHOWN = 50;
/** Pending deliveries are tried again on their schedule, by any process: read again this often. */
const REREAD_MS = 5_000;

/** The webhook deliveries, read again when a notification is made and every few seconds. */
function useDeliveries(connection: number, onUnauthorized: () => void): WebhookDelivery[] {
  const [deliveries, setDeliveries] = useState<WebhookDelivery[]>([]);
  useEffect(() => {
    const read = () =>
      getJson<WebhookDelivery[]>(`/v1/webhooks/deliveries?limit=${SHOWN}`)
        .then(setDeliveries)
        .catch((error: unknown) => {
          if (error instanceof Unauthorized) onUnauthorized();
        });
    void read();
    const timer = setInterval(read, REREAD_MS);
    // A notification's delivery is attempted at once: read shortly after.
    const stop = follow<CallEvent>(() => '/v1/events', {
      onMessage: (event) => {
        if (event.type === 'notification') setTimeout(read, 500);
      },
      onUnauthorized,
    });
    return () => {
      clearInterval(timer);
      stop();
    };
  }, [connection, onUnauthorized]);
  return deliveries;
}

function lastAttemptOf(delivery: WebhookDelivery): string {
  const last = delivery.lastAttempt;
  if (!last) return 'not tried yet';
  return `${formatTime(last.at)} ${last.status === undefined ? (last.error ?? '') : `HTTP ${last.status}`}`;
}

/** Webhook deliveries of notifications: pending ones with when they are tried next, failed ones with why. */
export function WebhooksPanel({
  connection,
  onUnauthorized,
  onSelect,
}: {
  connection: number;
  onUnauthorized: () => void;
  onSelect: (callId: string) => void;
}) {
  const deliveries = useDeliveries(connection, onUnauthorized);
  if (deliveries.length === 0) {
    return (
      <p class="empty">
        No webhook deliveries yet: a server with a webhook (<code>--webhook-url</code>) sends each
        notification to it.
      </p>
    );
  }
  const failed = deliveries.filter((delivery) => delivery.status === 'failed').length;
  return (
    <section class="webhooks" aria-label="Webhook deliveries">
      <h2>Webhook deliveries {failed > 0 && <span class="pill failed">{failed} failed</span>}</h2>
      <div class="table-frame">
        <table class="deliveries">
          <thead>
            <tr>
              <th>call</th>
              <th>status</th>
              <th>attempts</th>
              <th>last attempt</th>
              <th>next</th>
            </tr>
          </thead>
          <tbody>
            {deliveries.map((delivery) => (
              <tr
                key={delivery.id}
                data-delivery-id={delivery.id}
                data-status={delivery.status}
                onClick={() => onSelect(delivery.callId)}
              >
                <td>{delivery.callId}</td>
                <td>
                  <span class={`pill ${delivery.status === 'delivered' ? 'succeeded' : delivery.status}`}>
                    {delivery.status}
                  </span>
                </td>
                <td>{delivery.attempts}</td>
                <td class="status-text" title={delivery.lastAttempt?.url}>
                  {lastAttemptOf(delivery)}
                </td>
                <td>{delivery.status === 'pending' ? formatTime(delivery.nextAt) : ''}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}
