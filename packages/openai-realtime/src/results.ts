import { type Notification, notificationText } from '@baton/contracts';
import type { Runtime } from '@baton/runtime';
import { type PushDelivery, pushDelivery } from '@baton/runtime/bridge';
import type { RealtimeSession } from '@openai/agents-realtime';

/** What the bridge uses of a `RealtimeSession`. */
export type RealtimeConversation = Pick<RealtimeSession, 'transport'>;

export interface BatonRealtimeResultsOptions {
  sessionId: string;
  /** A result the bridge could not put into the conversation. */
  onError?: (error: unknown) => void;
}

/** The server event of the user starting to speak (voice activity detection). */
const SPEECH_STARTED = 'input_audio_buffer.speech_started';

/**
 * Puts the end of each backgrounded call of the session into the live conversation, once, by its
 * scheduling: `interrupt` stops what the model is saying and has it answer now; `when_idle` waits
 * for the model's turn to end, then has it answer; `silent` adds it to the conversation, and the
 * model says nothing of it until it is next asked. A result is acknowledged only once it is sent:
 * one that ends while the session is not connected (its socket dropped, or none attached) waits in
 * the store, and is put in once `attach` is given a session again.
 */
export class BatonRealtimeResults {
  readonly #runtime: Runtime;
  readonly #sessionId: string;
  readonly #onError: (error: unknown) => void;
  #session: RealtimeConversation | undefined;
  #responding = false;
  /** The kit's delivery: it watches the session, keeps the `when_idle` results, and acknowledges what was sent. */
  readonly #delivery: PushDelivery;
  readonly #detachers: Array<() => void> = [];

  constructor(
    runtime: Runtime,
    { sessionId, onError = (error) => console.error(error) }: BatonRealtimeResultsOptions,
  ) {
    this.#runtime = runtime;
    this.#sessionId = sessionId;
    this.#onError = onError;
    this.#delivery = pushDelivery(runtime, {
      sessionId,
      onError,
      target: {
        isIdle: () => !this.#responding,
        isConnected: () => this.#connected() !== undefined,
        put: (results, scheduling) => this.#put(results, scheduling),
      },
    });
  }

  /** Puts results into `session` from now on, first those that ended while none was attached. */
  async attach(session: RealtimeConversation): Promise<void> {
    this.detach();
    this.#session = session;
    const { transport } = session;
    const started = () => {
      this.#responding = true;
    };
    const done = () => {
      this.#responding = false;
      this.#delivery.idle().catch(this.#onError);
    };
    // The user spoke over the model: the response is cut, and the SDK drops the output of a tool
    // call still running in it. Those calls are cancelled; those already in the background go on.
    // Only the user's speech: the bridge's own interruption for an `interrupt` result cancels nothing.
    const heard = (event: { type?: string }) => {
      if (event.type !== SPEECH_STARTED) return;
      this.#cancelAnswering('the user interrupted the response').catch(this.#onError);
    };
    // The socket dropped: results wait in the store for the next `attach`.
    const connection = (status: string) => {
      if (status === 'disconnected' && this.#session === session) this.detach();
    };
    transport.on('turn_started', started);
    transport.on('turn_done', done);
    transport.on('*', heard);
    transport.on('connection_change', connection);
    this.#detachers.push(
      () => transport.off('turn_started', started),
      () => transport.off('turn_done', done),
      () => transport.off('*', heard),
      () => transport.off('connection_change', connection),
    );
    await this.#delivery.connected();
  }

  /** The session is gone: results wait in the store until `attach`. */
  detach(): void {
    for (const detach of this.#detachers.splice(0)) detach();
    this.#session = undefined;
    this.#responding = false;
    this.#delivery.disconnected();
  }

  /**
   * The conversation is over: the calls it is still waiting for (within their budget) are
   * cancelled, as no one will take their answer; those in the background go on, and their ends
   * wait in the store for a session of `sessionId`.
   */
  async close(): Promise<void> {
    this.detach();
    this.#delivery.close();
    await this.#cancelAnswering('the voice session ended');
  }

  /** Cancels the session's calls that have not answered yet (queued, or running within their budget). */
  async #cancelAnswering(reason: string): Promise<void> {
    const pages = await Promise.all(
      (['queued', 'inline'] as const).map((status) =>
        this.#runtime.list({ sessionId: this.#sessionId, status }),
      ),
    );
    const calls = pages.flatMap((page) => page.calls);
    await Promise.all(calls.map((call) => this.#runtime.cancel(call.callId, reason)));
  }

  /** The attached session, while its transport is connected. */
  #connected(): RealtimeConversation | undefined {
    const session = this.#session;
    const status = (session?.transport as { status?: string } | undefined)?.status;
    return status === undefined || status === 'connected' ? session : undefined;
  }

  /** Sends results as one message; a send that throws leaves them to the kit, for the next send. */
  #put(results: readonly Notification[], how: Notification['scheduling']): void {
    const session = this.#connected();
    if (!session) throw new Error('the Realtime session is not connected');
    if (how === 'interrupt' && this.#responding) this.#interrupt(session);
    session.transport.sendMessage(
      results.map(notificationText).join('\n\n'),
      {},
      { triggerResponse: how !== 'silent' },
    );
  }

  /**
   * Stops the model's response: cancelled, and what it has said of it kept as said (the audio the
   * listener heard, when it plays audio; the transport's own interruption).
   */
  #interrupt(session: RealtimeConversation): void {
    session.transport.sendEvent({ type: 'response.cancel' });
    const transport = session.transport as { interrupt(cancelOngoingResponse?: boolean): void };
    transport.interrupt(false);
  }
}

/** Puts the session's background results into a Realtime conversation: see `BatonRealtimeResults`. */
export function batonRealtimeResults(
  runtime: Runtime,
  options: BatonRealtimeResultsOptions,
): BatonRealtimeResults {
  return new BatonRealtimeResults(runtime, options);
}
