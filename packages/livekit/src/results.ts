import { type Notification, notificationText, type Scheduling } from '@baton/contracts';
import type { Runtime } from '@baton/runtime';
import { type PushDelivery, pushDelivery } from '@baton/runtime/bridge';
import { voice } from '@livekit/agents';

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
  readonly #session: LiveKitSession;
  readonly #onError: (error: unknown) => void;
  /** The kit's delivery: it watches the session, keeps the `when_idle` results, and acknowledges what was put in. */
  readonly #delivery: PushDelivery;
  readonly #settled = () => {
    this.#delivery.idle().catch(this.#onError);
  };

  constructor(
    runtime: Runtime,
    session: LiveKitSession,
    { sessionId, onError = (error) => console.error(error) }: BatonLiveKitResultsOptions,
  ) {
    this.#session = session;
    this.#onError = onError;
    this.#delivery = pushDelivery(runtime, {
      sessionId,
      onError,
      target: { isIdle: () => this.#idle(), put: (results, scheduling) => this.#put(results, scheduling) },
    });
    session.on(voice.AgentSessionEventTypes.AgentStateChanged, this.#settled);
    session.on(voice.AgentSessionEventTypes.UserStateChanged, this.#settled);
  }

  /** The voice session is over: results that come from now on wait in the store for the next one. */
  close(): void {
    this.#delivery.close();
    this.#session.off(voice.AgentSessionEventTypes.AgentStateChanged, this.#settled);
    this.#session.off(voice.AgentSessionEventTypes.UserStateChanged, this.#settled);
  }

  /** Neither the agent nor the user is speaking, nor the agent thinking. */
  #idle(): boolean {
    const { agentState, userState } = this.#session;
    return (agentState === 'listening' || agentState === 'idle') && userState !== 'speaking';
  }

  /** Puts results in as one message; one that could not be put in is kept by the kit for the next send. */
  async #put(results: readonly Notification[], how: Scheduling): Promise<void> {
    const text = results.map(notificationText).join('\n\n');
    if (how === 'silent') {
      const agent = this.#session.currentAgent;
      const context = agent.chatCtx.copy();
      context.addMessage({ role: 'user', content: text });
      await agent.updateChatCtx(context);
      return;
    }
    // Said over the agent: what it has said so far stays said; the rest is dropped.
    if (how === 'interrupt' && this.#session.agentState === 'speaking') await this.#session.interrupt();
    this.#session.generateReply({ userInput: text });
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
