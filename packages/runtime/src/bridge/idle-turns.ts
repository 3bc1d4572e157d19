import { type Notification, startsTurn } from '@baton/contracts';
import { filter, type Observable } from 'rxjs';
import type { Runtime } from '../runtime-api.js';

/**
 * The session's results worth a turn of their own when they come while the conversation is idle
 * (all but `silent` ones, `startsTurn`), as they are stored, by this process or another. The
 * subscriber is called in the async context it subscribed in, not in the one of the tool call that
 * ended: a turn it starts is a root turn of its framework (LangGraph's thread keeps it), and a span
 * it starts begins a trace of its own (the call's trace is in its record, `trace`, to link to).
 */
export function idleTurns(
  runtime: Pick<Runtime, 'notifications'>,
  { sessionId }: { sessionId: string },
): Observable<Notification> {
  return runtime.notifications.watch({ sessionId }).pipe(filter((notification) => startsTurn(notification)));
}
