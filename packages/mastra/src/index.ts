/**
 * `@baton/mastra`: Baton inside Mastra. A runtime's tools as Mastra tools for an `Agent`, the
 * session's background results before the next model call through an input processor, and
 * approvals through a tool's suspend and resume.
 */

/** What a paused run carries, and what to resume it with (`agent.resumeGenerate(decision, { runId, toolCallId })`): the bridge kit's one shape. */
export type {
  ApprovalDecision as BatonApprovalDecision,
  ApprovalRequest as BatonApprovalRequest,
} from '@baton/runtime/bridge';
export {
  type BatonNotificationsOptions,
  batonNotificationsProcessor,
  notificationMessage,
} from './notifications.js';
export {
  type BatonMastraTool,
  type BatonMastraToolsOptions,
  batonMastraTools,
} from './tools.js';
