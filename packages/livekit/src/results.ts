import { type Notification, notificationText, type Scheduling } from '@baton/contracts';
import type { Runtime } from '@baton/runtime';
import { voice } from '@livekit/agents';
import type { Subscription } from 'rxjs';

/** What the bridge uses of an `AgentSession`. */
export type LiveKitSession = Pick<
  voice.AgentSession,
  'on' | 'off' | 'agentState' | 'userState' | 'interrupt' | 'generateReply' | 'currentAgent'
>;

export interface BatonLiveKitResultsOptions {
  sessionId: string;
  /** A result the bridge could not put into the session. */
  onError?: (error: unknown) => void;
}

/**
 * Puts the end of each backgrounded call of the session into a LiveKit voice session, once, by its
 * scheduling: `interrupt` stops what the agent is saying and has it speak the result now;
 * `when_idle` waits until neither the agent nor the user is speaking, then has the agent speak it;
 * `silent` adds it to the agent's chat context, and the agent says nothing of it until it is next
 * asked. A result is acknowledged once it is in the session; one that could not be put in stays
 * queued in the store.
 */
export class BatonLiveKitResults {
  readonly #runtime: Runtime;
  readonly #session: LiveKitSession;
  readonly #onError: (error: unknown) => void;
  /** `when_idle` results waiting for the conversation to pause. */
  #waiting: Notification[] = [];
  /** The results given (or being given) here: each is put in once, whoever else reads it first. */
  readonly #given = new Set<string>();
  readonly #watching: Subscription;
  readonly #settled = () => {
    this.#flush().catch(this.#onError);
  };

  constructor(
    runtime: Runtime,
    session: LiveKitSession,
    { sessionId, onError = (error) => console.error(error) }: BatonLiveKitResultsOptions,
  ) {
    this.#runtime = runtime;
    this.#session = session;
    this.#onError = onError;
    session.on(voice.AgentSessionEventTypes.AgentStateChanged, this.#settled);
    session.on(voice.AgentSessionEventTypes.UserStateChanged, this.#settled);
    this.#watching = runtime.notifications.watch({ sessionId }).subscribe({
      next: (notification) => void this.#deliver(notification).catch(this.#onError),
      error: this.#onError,
    });
  }

  /** The voice session is over: results that come from now on wait in the store for the next one. */
  close(): void {
    this.#watching.unsubscribe();
    this.#session.off(voice.AgentSessionEventTypes.AgentStateChanged, this.#settled);
    this.#session.off(voice.AgentSessionEventTypes.UserStateChanged, this.#settled);
    for (const waiting of this.#waiting.splice(0)) this.#given.delete(waiting.id);
  }

  /** Neither the agent nor the user is speaking, nor the agent thinking. */
  #idle(): boolean {
    const { agentState, userState } = this.#session;
    return (agentState === 'listening' || agentState === 'idle') && userState !== 'speaking';
  }

  async #deliver(notification: Notification): Promise<void> {
    if (this.#given.has(notification.id)) return;
    this.#given.add(notification.id);
    if (notification.scheduling === 'when_idle' && !this.#idle()) {
      this.#waiting.push(notification);
      return;
    }
    await this.#put([notification], notification.scheduling);
  }

  /** Puts results in as one message, then acknowledges them; one that could not be put in stays queued. */
  async #put(notifications: Notification[], how: Scheduling): Promise<void> {
    const text = notifications.map(notificationText).join('\n\n');
    try {
      if (how === 'silent') {
        const agent = this.#session.currentAgent;
        const context = agent.chatCtx.copy();
        context.addMessage({ role: 'user', content: text });
        await agent.updateChatCtx(context);
      } else {
        // Said over the agent: what it has said so far stays said; the rest is dropped.
        if (how === 'interrupt' && this.#session.agentState === 'speaking') await this.#session.interrupt();
        this.#session.generateReply({ userInput: text });
      }
    } catch (error) {
      for (const notification of notifications) this.#given.delete(notification.id);
      this.#onError(error);
      return;
    }
    await Promise.all(notifications.map((notification) => this.#runtime.notifications.ack(notification.id)));
  }

  /** The conversation paused: the results that waited for it, in one message. */
  async #flush(): Promise<void> {
    if (this.#waiting.length === 0 || !this.#idle()) return;
    await this.#put(this.#waiting.splice(0), 'when_idle');
  }
}

/** Puts the session's background results into a LiveKit voice session: see `BatonLiveKitResults`. */
export function batonLiveKitResults(
  runtime: Runtime,
  session: LiveKitSession,
  options: BatonLiveKitResultsOptions,
): BatonLiveKitResults {
  return new BatonLiveKitResults(runtime, session, options);
}
