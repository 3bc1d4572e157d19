import type { Runtime } from '@baton/runtime';
import type { RunState, RunToolApprovalItem } from '@openai/agents';

/** The run states whose interruptions these helpers decide (any agent, any context). */
type AnyRunState = Pick<RunState<unknown, never>, 'approve' | 'reject'>;

const callIdOf = (item: RunToolApprovalItem): string | undefined =>
  'callId' in item.rawItem && typeof item.rawItem.callId === 'string' ? item.rawItem.callId : undefined;

export interface BatonApprovals {
  /** Approves the interruption in the run and the Baton call behind it, which starts at once. */
  approve(state: AnyRunState, item: RunToolApprovalItem): Promise<void>;
  /**
   * Rejects the interruption in the run and the Baton call behind it, which ends without running;
   * the model is told `message` (the SDK's default rejection text without one).
   */
  reject(state: AnyRunState, item: RunToolApprovalItem, options?: { message?: string }): Promise<void>;
}

/**
 * Decides an Agents run's interruptions for Baton tools on both sides at once. A plain
 * `state.approve(item)` approves the Baton call too when the run resumes; a plain `state.reject`
 * cannot reach it (the SDK runs nothing of a rejected tool), so reject through here.
 */
export function batonApprovals(runtime: Runtime): BatonApprovals {
  return {
    async approve(state, item) {
      state.approve(item);
      const callId = callIdOf(item);
      if (callId !== undefined) await runtime.inputs.approve(callId);
    },
    async reject(state, item, options = {}) {
      state.reject(item, options.message !== undefined ? { message: options.message } : {});
      const callId = callIdOf(item);
      if (callId === undefined) return;
      await runtime.inputs.reject(callId, options.message ?? 'rejected in the agent run');
      // The SDK tells the model of the rejection itself: the call's end is given, not told again.
      await runtime.notifications.given(callId);
    },
  };
}
