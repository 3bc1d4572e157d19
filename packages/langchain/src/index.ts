export {
  type BatonNotificationsOptions,
  batonNotificationsMiddleware,
  batonNotificationsNode,
  notificationMessage,
  notificationUpdate,
} from './notifications.js';
export {
  type BatonApprovalDecision,
  type BatonApprovalRequest,
  type BatonLangChainToolsOptions,
  batonLangChainTools,
} from './tools.js';
