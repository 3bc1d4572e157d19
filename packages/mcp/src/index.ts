export {
  createMcpHandler,
  DEFAULT_MAX_BODY_BYTES,
  type McpHandler,
  type McpHandlerOptions,
  type McpRequestBody,
} from './handler.js';
export { type NodeMcpHandler, toNodeHandler } from './node.js';
export { type McpScope, SINGLE_TENANT } from './scope.js';
export type { ServerInfo } from './server.js';
export {
  type ClosedSession,
  DEFAULT_SESSION_TTL_MS,
  DEFAULT_SESSIONS,
  DEFAULT_SESSIONS_PER_TENANT,
  type SessionLimits,
} from './sessions.js';
export { POLL_INTERVAL_MS, TASKS_EXTENSION } from './task-view.js';
