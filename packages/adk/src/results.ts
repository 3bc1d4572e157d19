import { type Notification, notificationText, toGeminiNotificationResponse } from '@baton/contracts';
import type { Runtime } from '@baton/runtime';
import { pullDelivery } from '@baton/runtime/bridge';
import { createEvent, type Event, type Runner, type Session } from '@google/adk';

/** A message of the conversation, as the runner takes it (`@google/genai`'s `Content`). */
export type AdkContent = Parameters<Runner['runAsync']>[0]['newMessage'];

export interface BatonAdkResultsOptions {
  userId: string;
  /** The ADK session the calls were made in. */
  sessionId: string;
  /** The Baton session of the calls, when the tools were given one other than the ADK session's id. */
  batonSessionId?: string;
  /**
   * Whether the agent is idle: no run of this session in progress, the user not in the middle of
   * a turn. `when_idle` results wait for it; `interrupt` ones do not. Default true.
   */
  idle?: boolean;
}

/**
 * The message that brings a background call's end back to the agent: the function response of the
 * same call (its id and name), with the result or why there is none. ADK places it beside the call
 * for the model, in place of the acknowledgement.
 */
export function resultMessage(notification: Notification): AdkContent {
  return {
    role: 'user',
    parts: [
      {
        functionResponse: {
          id: notification.callId,
          name: notification.toolName,
          response: toGeminiNotificationResponse(notification),
        },
      },
    ],
  };
}

/**
 * The message of a result whose call this ADK session never made (a call of its Baton session made
 * elsewhere: the API, another process's agent): its words, as the user's. ADK refuses a function
 * response that answers no function call of the session.
 */
export function resultText(notification: Notification): AdkContent {
  return { role: 'user', parts: [{ text: notificationText(notification) }] };
}

/** The ids of the function calls the ADK session holds. */
function functionCallIds(session: Session | undefined): Set<string> {
  const ids = new Set<string>();
  for (const event of session?.events ?? []) {
    for (const part of event.content?.parts ?? []) if (part.functionCall?.id) ids.add(part.functionCall.id);
  }
  return ids;
}

/**
 * Brings the session's background results back to the agent, each once, by its scheduling:
 * - `interrupt`, and `when_idle` when the agent is idle: a run of the runner with the result as the
 *   function response of its call (or in words, `resultText`, for a call this ADK session did not
 *   make), so that the model takes it up at once; the runs' events are yielded, as
 *   `runner.runAsync`'s are;
 * - `silent`: the function response added to the ADK session without a run; the model has it at
 *   its next turn.
 * Each is acknowledged once the ADK session holds it (its run ended, or the event was added); one
 * whose run failed, or taken in a process that died first, is given again at the next call.
 *
 * Call it between the session's runs (a session takes one run at a time): when a result comes
 * (`idleTurns` (`@baton/runtime/bridge`)) while the agent is idle, and before a user's turn.
 */
export async function* batonAdkResults(
  runtime: Pick<Runtime, 'notifications'>,
  runner: Pick<Runner, 'runAsync' | 'sessionService' | 'appName'>,
  options: BatonAdkResultsOptions,
): AsyncGenerator<Event, void, undefined> {
  const { userId, sessionId } = options;
  const delivery = pullDelivery(runtime, { sessionId: options.batonSessionId ?? sessionId });
  const sessionOf = () => runner.sessionService.getSession({ appName: runner.appName, userId, sessionId });
  try {
    const taken = await delivery.take({ idle: options.idle ?? true });
    const calledHere = taken.length > 0 ? functionCallIds(await sessionOf()) : new Set<string>();
    for (const notification of taken) {
      const message = calledHere.has(notification.callId)
        ? resultMessage(notification)
        : resultText(notification);
      if (notification.scheduling === 'silent') {
        const session = await sessionOf();
        if (session === undefined)
          throw new Error(`no ADK session ${sessionId} of user ${userId} to add a result to`);
        await runner.sessionService.appendEvent({
          session,
          event: createEvent({ invocationId: `baton-${notification.id}`, author: 'user', content: message }),
        });
      } else {
        let failed = false;
        for await (const event of runner.runAsync({ userId, sessionId, newMessage: message })) {
          // ADK tells of a model call that failed as an event: the run did not give the model the result.
          if (event.errorCode !== undefined) failed = true;
          yield event;
        }
        if (failed) continue;
      }
      await delivery.confirm([notification]);
    }
  } finally {
    // Not in the session (a run that threw, a loop that stopped reading): given again next time.
    await delivery.release();
  }
}
