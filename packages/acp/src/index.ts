/**
 * `@baton/acp`: Baton inside an ACP agent (the Agent Client Protocol, editors to coding agents).
 * The agent's tool calls as Baton calls, reported to the client as ACP tool calls; a call that
 * goes on past its turn stays in progress, and its end comes back once. What this file exports is
 * the public API.
 */
export { PERMISSION_OPTIONS } from './permission.js';
export { BATON_META, type ToolCallReport } from './reports.js';
export { LOG_TAIL_CHARS } from './running-reports.js';
export {
  type AcpClient,
  type AcpResult,
  type AcpToolCall,
  type AcpToolReply,
  type BatonAcpSession,
  type BatonAcpSessionOptions,
  type BatonAcpSessionSettings,
  batonAcpSession,
  type ResultsWhen,
} from './session.js';
export { v2UpdateOf } from './wire.js';
