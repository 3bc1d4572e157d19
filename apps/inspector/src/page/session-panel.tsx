import type { CallEvent, Notification } from '@baton/contracts';
import { useEffect, useState } from 'preact/hooks';
import { follow, getJson, Unauthorized } from './api.js';
import { formatTime } from './format.js';

/**
 * The open session's notifications are read when one of its calls' ends becomes one (an event on
 * the live stream), and now and then besides, for their acknowledgements, which no event tells of.
 */
const REREAD_MS = 30_000;

export interface SessionPanelProps {
  sessionId: string;
  connection: number;
  onUnauthorized: () => void;
  onError: (error: unknown) => void;
}

/** A session's notifications, as the model is given them: the text of each backgrounded call's end. */
export function SessionPanel({ sessionId, connection, onUnauthorized, onError }: SessionPanelProps) {
  const [notifications, setNotifications] = useState<Notification[]>([]);
  useEffect(() => {
    let stopped = false;
    const read = () =>
      getJson<Notification[]>(`/v1/notifications?sessionId=${encodeURIComponent(sessionId)}&limit=100`)
        .then((list) => !stopped && setNotifications(list))
        .catch((error: unknown) => (error instanceof Unauthorized ? onUnauthorized() : onError(error)));
    const stopFollowing = follow<CallEvent>(() => '/v1/events', {
      onOpen: () => void read(),
      onMessage: (event) => {
        if (event.type === 'notification' && event.sessionId === sessionId) void read();
      },
      onUnauthorized,
    });
    const timer = setInterval(read, REREAD_MS);
    return () => {
      stopped = true;
      stopFollowing();
      clearInterval(timer);
    };
  }, [sessionId, connection, onUnauthorized, onError]);
  return (
    <section class="session" data-session={sessionId} aria-label="Session">
      <h3>
        Session <code>{sessionId}</code>: notifications for the model
      </h3>
      {notifications.length === 0 ? (
        <p class="muted">None yet: a call that ends in the background brings one.</p>
      ) : (
        <ol class="notifications">
          {notifications.map((notification) => (
            <li
              key={notification.id}
              data-notification-of={notification.callId}
              data-status={notification.status}
            >
              <header>
                <time>{formatTime(notification.createdAt)}</time> <strong>{notification.title}</strong>{' '}
                <span class={`pill ${notification.outcome}`}>{notification.outcome}</span>{' '}
                <span class="muted">
                  {notification.status}, {notification.scheduling}
                </span>
              </header>
              <pre>{notification.body}</pre>
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}
