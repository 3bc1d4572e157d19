/** What a paused run carries, and what to resume it with (`new Command({ resume })`): the bridge kit's one shape. */
export type {
  ApprovalDecision as BatonApprovalDecision,
  ApprovalRequest as BatonApprovalRequest,
} from '@baton/runtime/bridge';
export {
  type BatonNotificationsOptions,
  batonNotificationsMiddleware,
  batonNotificationsNode,
  notificationMessage,
} from './notifications.js';
export {
  type BatonLangChainToolsOptions,
  batonLangChainTools,
} from './tools.js';
