export { type BatonApprovals, batonApprovals } from './approvals.js';
export {
  type BatonAgentNotifications,
  type BatonAgentNotificationsOptions,
  batonAgentNotifications,
  notificationItem,
} from './notifications.js';
export { type BatonAgentTool, type BatonAgentToolsOptions, batonAgentTools } from './tools.js';
