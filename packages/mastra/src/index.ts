/**
 * `@baton/mastra`: Baton inside Mastra. A runtime's tools as Mastra tools for an `Agent`, the
 * session's background results before the next model call through an input processor, and
 * approvals through a tool's suspend and resume.
 */
export {
  type BatonNotificationsOptions,
  batonNotificationsProcessor,
  notificationMessage,
} from './notifications.js';
export {
  type BatonApprovalDecision,
  type BatonApprovalRequest,
  type BatonMastraTool,
  type BatonMastraToolsOptions,
  batonMastraTools,
} from './tools.js';
