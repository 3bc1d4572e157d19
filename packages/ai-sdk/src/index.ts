export { batonApprovalResponses, DENIED_REASON } from './approvals.js';
export { modelOutputOf, type ToolResultOutput } from './model-output.js';
export {
  type BatonNotifications,
  type BatonNotificationsOptions,
  batonNotifications,
  notificationMessage,
  type PrepareStep,
  responseMessagesOf,
  type TurnResult,
} from './notifications.js';
export { DEFAULT_SUB_AGENT_TURNS, type SubAgentToolOptions, subAgentTool } from './sub-agent.js';
export { type BatonToolsOptions, batonTools } from './tools.js';
