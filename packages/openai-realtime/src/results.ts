import type { Notification } from '@baton/contracts';
import type { Runtime } from '@baton/runtime';
import type { RealtimeSession } from '@openai/agents-realtime';
import type { Subscription } from 'rxjs';

/** What the bridge uses of a `RealtimeSession`. */
export type RealtimeConversation = Pick<RealtimeSession, 'transport'>;

export interface BatonRealtimeResultsOptions {
  sessionId: string;
  /** A result the bridge could not put into the conversation. */
  onError?: (error: unknown) => void;
}

/** The text the model is given of a background result: what the other bridges give. */
export function resultText(notification: Notification): string {
  return `${notification.title}\n${notification.body}`;
}

/**
 * Puts the end of each backgrounded call of the session into the live conversation, once, by its
 * scheduling: `interrupt` stops what the model is saying and has it answer now; `when_idle` waits
 * for the model's turn to end, then has it answer; `silent` adds it to the conversation, and the
 * model says nothing of it until it is next asked. A result that ends while the session is not
 * connected waits in the store, and is put in once `attach` is given a session again.
 */
export class BatonRealtimeResults {
  readonly #runtime: Runtime;
  readonly #sessionId: string;
  readonly #onError: (error: unknown) => void;
  #session: RealtimeConversation | undefined;
  #responding = false;
  /** `when_idle` results waiting for the model's turn to end. */
  #waiting: string[] = [];
  readonly #watching: Subscription;
  readonly #detachers: Array<() => void> = [];

  constructor(
    runtime: Runtime,
    { sessionId, onError = (error) => console.error(error) }: BatonRealtimeResultsOptions,
  ) {
    this.#runtime = runtime;
    this.#sessionId = sessionId;
    this.#onError = onError;
    this.#watching = runtime.notifications.watch({ sessionId }).subscribe({
      next: (notification) => void this.#deliver(notification).catch(this.#onError),
      error: this.#onError,
    });
  }

  /** Puts results into `session` from now on, first those that ended while none was attached. */
  async attach(session: RealtimeConversation): Promise<void> {
    this.detach();
    this.#session = session;
    const started = () => {
      this.#responding = true;
    };
    const done = () => {
      this.#responding = false;
      this.#flush();
    };
    // The user spoke over the model: the response is cut, and the SDK drops the output of a tool
    // call still running in it. Those calls are cancelled; those already in the background go on.
    const interrupted = () =>
      void this.#cancelAnswering('the user interrupted the response').catch(this.#onError);
    session.transport.on('turn_started', started);
    session.transport.on('turn_done', done);
    session.transport.on('audio_interrupted', interrupted);
    this.#detachers.push(
      () => session.transport.off('turn_started', started),
      () => session.transport.off('turn_done', done),
      () => session.transport.off('audio_interrupted', interrupted),
    );
    const queued = await this.#runtime.notifications.list({ sessionId: this.#sessionId, status: 'queued' });
    await Promise.all(queued.map((notification) => this.#deliver(notification)));
  }

  /** The session is gone: results wait in the store until `attach`. */
  detach(): void {
    for (const detach of this.#detachers.splice(0)) detach();
    this.#session = undefined;
    this.#responding = false;
  }

  /**
   * The conversation is over: the calls it is still waiting for (within their budget) are
   * cancelled, as no one will take their answer; those in the background go on, and their ends
   * wait in the store for a session of `sessionId`.
   */
  async close(): Promise<void> {
    this.detach();
    this.#watching.unsubscribe();
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

  async #deliver(notification: Notification): Promise<void> {
    const session = this.#session;
    if (!session) return;
    // Taken first: given once, even with another bridge on the session.
    if (!(await this.#runtime.notifications.ack(notification.id))) return;
    const text = resultText(notification);
    if (notification.scheduling === 'silent') {
      session.transport.sendMessage(text, {}, { triggerResponse: false });
    } else if (notification.scheduling === 'interrupt') {
      if (this.#responding) this.#interrupt(session);
      session.transport.sendMessage(text, {}, { triggerResponse: true });
    } else if (this.#responding) {
      this.#waiting.push(text);
    } else {
      session.transport.sendMessage(text, {}, { triggerResponse: true });
    }
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

  /** The model's turn ended: the results that waited for it, in one message. */
  #flush(): void {
    if (this.#waiting.length === 0 || !this.#session) return;
    const text = this.#waiting.splice(0).join('\n\n');
    this.#session.transport.sendMessage(text, {}, { triggerResponse: true });
  }
}

/** Puts the session's background results into a Realtime conversation: see `BatonRealtimeResults`. */
export function batonRealtimeResults(
  runtime: Runtime,
  options: BatonRealtimeResultsOptions,
): BatonRealtimeResults {
  return new BatonRealtimeResults(runtime, options);
}
