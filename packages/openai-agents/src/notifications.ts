import { type Notification, notificationText } from '@baton/contracts';
import type { Runtime } from '@baton/runtime';
import { PlacedMessages, pullDelivery } from '@baton/runtime/bridge';
import type { AgentInputItem, CallModelInputFilter } from '@openai/agents';

export interface BatonAgentNotificationsOptions {
  sessionId: string;
}

/** The input item that brings a background result into the conversation (the background continuation's notification). */
export function notificationItem(notification: Notification): AgentInputItem {
  return { type: 'message', role: 'user', content: notificationText(notification) };
}

export interface BatonAgentNotifications {
  /**
   * Starts a turn: the results due now that the model has finished its last turn (all of them,
   * the result scheduling), as input items to put before the user's words.
   */
  turnInput(): Promise<AgentInputItem[]>;
  /**
   * For `run(agent, input, { callModelInputFilter })`: `interrupt` and `silent` results that arrive
   * during the run come into the next model call, and stay where they went in for the rest of it.
   */
  callModelInputFilter: CallModelInputFilter;
  /**
   * The run ended: its `history`, with the results given during the run where they were given.
   * The model had every result given to the run, so each is acknowledged here; one given to a run
   * that failed (or in a process that died before it ended) is given again at the next turn.
   */
  history(items: readonly AgentInputItem[]): Promise<AgentInputItem[]>;
}

/** Background results for an Agents SDK loop, each given once, under the result scheduling. */
export function batonAgentNotifications(
  runtime: Pick<Runtime, 'notifications'>,
  { sessionId }: BatonAgentNotificationsOptions,
): BatonAgentNotifications {
  const delivery = pullDelivery(runtime, { sessionId });
  /** This run's notification items, each at the index of the model input where it went in. */
  const placed = new PlacedMessages<AgentInputItem>();
  /** Whether the run has called its model: the results given before then were seen by it. */
  let called = false;
  return {
    async turnInput() {
      placed.clear();
      called = false;
      // Held still: given to a run that did not end; they are given again.
      await delivery.release();
      return (await delivery.take({ idle: true })).map(notificationItem);
    },
    callModelInputFilter: async ({ modelData }) => {
      // The model call before this one ran: it had what it was given.
      if (called) await delivery.confirm();
      called = true;
      // The SDK's input holds the run's items, not the ones this filter added before: they go back in.
      placed.place(modelData.input.length, (await delivery.take({ idle: false })).map(notificationItem));
      return { ...modelData, input: placed.merged(modelData.input) };
    },
    async history(items) {
      await delivery.confirm();
      return placed.merged(items);
    },
  };
}
