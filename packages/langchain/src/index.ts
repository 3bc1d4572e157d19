export {
  type BatonNotificationsOptions,
  batonNotificationsMiddleware,
  batonNotificationsNode,
  notificationMessage,
} from './notifications.js';
export {
  type BatonApprovalDecision,
  type BatonApprovalRequest,
  type BatonLangChainToolsOptions,
  batonLangChainTools,
} from './tools.js';
