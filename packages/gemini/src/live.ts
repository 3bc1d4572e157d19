import {
  type Notification,
  type Scheduling,
  toGeminiNotificationResponse,
  toGeminiResponse,
} from '@baton/contracts';
import type { Runtime } from '@baton/runtime';
import { bridgeCall, type PushDelivery, pushDelivery } from '@baton/runtime/bridge';
import {
  type FunctionCall,
  type FunctionResponse,
  FunctionResponseScheduling,
  type LiveServerMessage,
  type Session,
  type Tool,
} from '@google/genai';
import { geminiTools, isNonBlocking } from './declarations.js';

/** What the bridge sends on: a Live session of `@google/genai` (`ai.live.connect`), or any with its `sendToolResponse`. */
export type LiveConnection = Pick<Session, 'sendToolResponse'>;

export interface BatonLiveOptions {
  /**
   * The Baton session of this conversation: every function call is a call in it, and its results
   * come back to it. Keep it across the Live session's reconnections (session resumption).
   */
  sessionId: string;
  /** A failure the bridge could not answer the model with (a call Baton refused, a send that threw). */
  onError?: (error: unknown) => void;
}

/** A result's scheduling in the Live API, from the call's delivery policy. */
const SCHEDULING: Record<Scheduling, FunctionResponseScheduling> = {
  interrupt: FunctionResponseScheduling.INTERRUPT,
  when_idle: FunctionResponseScheduling.WHEN_IDLE,
  silent: FunctionResponseScheduling.SILENT,
};

/**
 * Baton inside a Gemini Live session. Give `onmessage` every server message and `attach` the
 * session once it is connected (again after each reconnection); the bridge:
 * - runs each function call of a `toolCall` as a Baton call (its id the call's id), and answers
 *   with its result when it ends within the inline budget;
 * - answers a call that goes to the background at its budget with the acknowledgement and
 *   `willContinue`, and sends its result when it ends, with the `scheduling` its delivery policy
 *   names (`INTERRUPT`, `WHEN_IDLE`, `SILENT`);
 * - cancels the Baton calls a `toolCallCancellation` names;
 * - keeps a result that ends while no session is attached (the socket dropped) in the store, and
 *   sends it once a session is attached again, once, even from another process.
 */
export class BatonLive {
  readonly #runtime: Runtime;
  readonly #sessionId: string;
  readonly #onError: (error: unknown) => void;
  #connection: LiveConnection | undefined;
  /** The calls whose first answer is on its way: a result waits for it, so the model hears them in order. */
  readonly #answering = new Map<string, Promise<void>>();
  /** The calls the server cancelled: it expects nothing more of them. */
  readonly #cancelled = new Set<string>();
  /** The kit's delivery of the session's results. */
  readonly #delivery: PushDelivery;
  #resumptionHandle: string | undefined;

  constructor(runtime: Runtime, { sessionId, onError = (error) => console.error(error) }: BatonLiveOptions) {
    this.#runtime = runtime;
    this.#sessionId = sessionId;
    this.#onError = onError;
    // The Live API holds a WHEN_IDLE result until the model's turn is over: the target is never busy.
    const target = {
      isConnected: () => this.#connection !== undefined,
      put: (results: readonly Notification[]) => this.#put(results),
    };
    this.#delivery = pushDelivery(runtime, { sessionId, onError, target });
  }

  /** The function declarations for the Live session's `config.tools`. */
  get tools(): Tool[] {
    return geminiTools(this.#runtime);
  }

  /** The latest handle the server gave to resume this session (`config.sessionResumption.handle`). */
  get resumptionHandle(): string | undefined {
    return this.#resumptionHandle;
  }

  /** Sends on `connection` from now on, first the results that ended while none was attached. */
  async attach(connection: LiveConnection): Promise<void> {
    this.#connection = connection;
    await this.#delivery.connected();
  }

  /** The socket closed: results wait in the store until `attach`. */
  detach(): void {
    this.#connection = undefined;
    this.#delivery.disconnected();
  }

  /** Stops delivering; the calls go on, and their results wait in the store. */
  close(): void {
    this.detach();
    this.#delivery.close();
  }

  /** Handles one server message; resolves once the calls of a `toolCall` have had their first answer. */
  onmessage = async (message: LiveServerMessage): Promise<void> => {
    // The model's turn is over: a send of results that failed goes again now.
    if (message.serverContent?.turnComplete) await this.#delivery.idle();
    const update = message.sessionResumptionUpdate;
    if (update?.resumable && update.newHandle) this.#resumptionHandle = update.newHandle;
    for (const id of message.toolCallCancellation?.ids ?? []) {
      this.#cancelled.add(id);
      await this.#runtime.cancel(id, 'the Live session cancelled the function call').catch(this.#onError);
    }
    await Promise.all((message.toolCall?.functionCalls ?? []).map((call) => this.#run(call)));
  };

  async #run(call: FunctionCall): Promise<void> {
    const { id, name } = call;
    if (!id || !name) {
      this.#onError(new Error(`a function call without an id or a name: ${JSON.stringify(call)}`));
      return;
    }
    const answered = bridgeCall(this.#runtime, {
      name,
      args: call.args ?? {},
      sessionId: this.#sessionId,
      callId: id,
    }).then(
      (reply) => {
        const backgrounded = reply.status === 'backgrounded';
        // Cancelled by the server before it answered: it expects no answer, and no end comes.
        if (!backgrounded && this.#cancelled.delete(id)) return;
        this.#send({
          id,
          name,
          response: toGeminiResponse(reply),
          // Past its budget: the acknowledgement, taken in silently; the result follows.
          ...(backgrounded ? { willContinue: true, scheduling: FunctionResponseScheduling.SILENT } : {}),
        });
      },
      (error: unknown) => {
        this.#onError(error);
        this.#send({
          id,
          name,
          response: { error: error instanceof Error ? error.message : String(error) },
        });
      },
    );
    this.#answering.set(id, answered);
    await answered.finally(() => this.#answering.delete(id));
  }

  /**
   * Background calls' results, each the function response of its call with the scheduling its
   * delivery policy names, after the call's first answer. Throws when the send did: the kit keeps
   * them for the next send.
   */
  async #put(results: readonly Notification[]): Promise<void> {
    await Promise.all(results.map((result) => this.#answering.get(result.callId)));
    const connection = this.#connection;
    if (!connection) throw new Error('the Live session closed before the results were sent');
    // Cancelled by the server: it expects nothing more of them (the kit acknowledges them unsent).
    const expected = results.filter((result) => !this.#cancelled.delete(result.callId));
    if (expected.length === 0) return;
    connection.sendToolResponse({
      functionResponses: expected.map((result) => ({
        id: result.callId,
        name: result.toolName,
        response: toGeminiNotificationResponse(result),
        ...(isNonBlocking(this.#runtime, result.toolName)
          ? { scheduling: SCHEDULING[result.scheduling] }
          : {}),
      })),
    });
  }

  /** A first answer: a send that throws is told to `onError`, and the call's end comes as a result. */
  #send(response: FunctionResponse): void {
    if (!this.#connection) return;
    try {
      this.#connection.sendToolResponse({ functionResponses: [response] });
    } catch (error) {
      this.#onError(error);
    }
  }
}

/** Baton inside a Gemini Live session: see `BatonLive`. */
export function batonLive(runtime: Runtime, options: BatonLiveOptions): BatonLive {
  return new BatonLive(runtime, options);
}
