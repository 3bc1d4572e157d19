import { type Notification, notificationText, toGeminiResponse } from '@baton/contracts';
import type { Runtime } from '@baton/runtime';
import type { FunctionCall, Part } from '@google/genai';

export interface FunctionCallOptions {
  /** The conversation: every call is in this Baton session, and its background results come back to it. */
  sessionId: string;
  /** Aborting it cancels the calls that have not answered. */
  signal?: AbortSignal;
}

/**
 * A `generateContent` reply's function calls run as Baton calls, all at once, each answered by its
 * `functionResponse` part in order: the result (`output`), the failure (`error`), or past the inline
 * budget the acknowledgement, the call going on in the background. A function call's id (Gemini
 * gives one in Live, and may in `generateContent`) is the Baton call's id, so the same reply handled
 * twice is the same calls; without one, each is a new call.
 */
export async function functionResponseParts(
  runtime: Pick<Runtime, 'call'>,
  functionCalls: readonly FunctionCall[],
  { sessionId, signal }: FunctionCallOptions,
): Promise<Part[]> {
  return Promise.all(
    functionCalls.map(async (call): Promise<Part> => {
      const name = call.name ?? '';
      const reply = await runtime.call(
        { name, args: call.args ?? {}, sessionId, ...(call.id ? { callId: call.id } : {}) },
        signal ? { signal } : {},
      );
      return {
        functionResponse: { ...(call.id ? { id: call.id } : {}), name, response: toGeminiResponse(reply) },
      };
    }),
  );
}

/** The text part that brings a background result into the conversation. */
export function notificationPart(notification: Notification): Part {
  return { text: notificationText(notification) };
}

/**
 * The session's due results as text parts of the next user turn, each given once: `interrupt`
 * ones at every step, `when_idle` ones when the model had finished its turn (`idle`), before the
 * user's words.
 */
export async function notificationParts(
  runtime: Pick<Runtime, 'notifications'>,
  { sessionId, idle }: { sessionId: string; idle: boolean },
): Promise<Part[]> {
  return (await runtime.notifications.take({ sessionId, idle })).map(notificationPart);
}
