import { type Notification, notificationText, toGeminiResponse } from '@baton/contracts';
import type { Runtime } from '@baton/runtime';
import { bridgeCall, pullDelivery } from '@baton/runtime/bridge';
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
      const reply = await bridgeCall(runtime, {
        name,
        args: call.args ?? {},
        sessionId,
        callId: call.id,
        signal,
      });
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

export interface GeminiNotifications {
  /**
   * The session's due results as text parts of the next user turn, before the user's words: at a
   * turn's start (`idle: true`, the model had finished its turn) all of them, during a run
   * `interrupt` and `silent` ones (the result scheduling). A turn's start gives again what a
   * request that failed was given.
   */
  parts(step: { idle: boolean }): Promise<Part[]>;
  /** The request that was given them answered: the model had them, and they are acknowledged. */
  confirm(): Promise<void>;
}

/** The session's background results for a `generateContent` loop, each given once (the bridge kit's pull delivery). */
export function geminiNotifications(
  runtime: Pick<Runtime, 'notifications'>,
  { sessionId }: { sessionId: string },
): GeminiNotifications {
  const delivery = pullDelivery(runtime, { sessionId });
  return {
    async parts({ idle }) {
      if (idle) await delivery.release();
      return (await delivery.take({ idle })).map(notificationPart);
    },
    confirm: () => delivery.confirm(),
  };
}
