export { type BatonApprovals, batonApprovals } from './approvals.js';
export {
  type BatonAgentNotifications,
  type BatonAgentNotificationsOptions,
  batonAgentNotifications,
  notificationItem,
} from './notifications.js';
export {
  type BatonResponses,
  type BatonResponsesOptions,
  batonResponses,
  type ResponsesFunctionCall,
  type ResponsesFunctionCallOutput,
  type ResponsesInputItem,
  type ResponsesUserMessage,
} from './responses.js';
export { type BatonAgentTool, type BatonAgentToolsOptions, batonAgentTools } from './tools.js';
