export {
  type AnthropicNotifications,
  type AnthropicNotificationsOptions,
  anthropicNotifications,
  notificationBlock,
} from './notifications.js';
export { type BatonRunnableToolsOptions, batonRunnableTools } from './tool-runner.js';
export {
  anthropicTools,
  type BatonToolUseOptions,
  handleToolUses,
  type MessageWithToolUses,
} from './tools.js';
