import { type Notification, notificationText } from '@baton/contracts';
import type { Runtime } from '@baton/runtime';
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
   * Starts a turn: the notifications due now that the model has finished its last turn
   * (`when_idle` and `interrupt`, the result scheduling), as input items to put before the user's words.
   */
  turnInput(): Promise<AgentInputItem[]>;
  /**
   * For `run(agent, input, { callModelInputFilter })`: `interrupt` notifications that arrive
   * during the run come into the next model call, and stay where they went in for the rest of it.
   */
  callModelInputFilter: CallModelInputFilter;
  /** A run's `history`, with the notifications given during the run where they were given. */
  history(items: readonly AgentInputItem[]): AgentInputItem[];
}

/**
 * Background results for an Agents SDK loop, each given once (it is acknowledged when it goes
 * into the input) under the result scheduling; `silent` ones are acknowledged and never given.
 */
export function batonAgentNotifications(
  runtime: Runtime,
  { sessionId }: BatonAgentNotificationsOptions,
): BatonAgentNotifications {
  /** This run's notification items, each at the index of the model input where it went in. */
  let placed: Array<{ at: number; item: AgentInputItem }> = [];
  const withPlaced = (items: readonly AgentInputItem[]): AgentInputItem[] => {
    const merged: AgentInputItem[] = [];
    let next = 0;
    for (const [index, item] of items.entries()) {
      for (; next < placed.length && (placed[next]?.at ?? 0) <= index; next++)
        merged.push((placed[next] as { item: AgentInputItem }).item);
      merged.push(item);
    }
    for (; next < placed.length; next++) merged.push((placed[next] as { item: AgentInputItem }).item);
    return merged;
  };
  return {
    async turnInput() {
      placed = [];
      return (await runtime.notifications.take({ sessionId, idle: true })).map(notificationItem);
    },
    callModelInputFilter: async ({ modelData }) => {
      // The SDK's input holds the run's items, not the ones this filter added before: they go back in.
      const at = modelData.input.length;
      for (const notification of await runtime.notifications.take({ sessionId, idle: false }))
        placed.push({ at, item: notificationItem(notification) });
      return { ...modelData, input: withPlaced(modelData.input) };
    },
    history: (items) => withPlaced(items),
  };
}
