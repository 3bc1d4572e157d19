/**
 * `@baton/contracts`: the vocabulary every Baton package shares. What this file exports is the
 * public API; it imports neither xstate nor rxjs.
 */
export {
  CALL_STATUSES,
  isTerminalStatus,
  type CallError,
  type CallIssue,
  type CallRecord,
  type CallReply,
  type CallStatus,
  type Concurrency,
  type ExecutionMode,
  type LogStream,
  type Notification,
  type NotificationStatus,
  type Progress,
  type RecordedError,
  type ReplyStatus,
  type Scheduling,
  type TerminalStatus,
} from './call.js';
export type { ToolContext } from './context.js';
export {
  defineTool,
  type AnyTool,
  type ExecutionOptions,
  type Tool,
  type ToolConfig,
  type ToolReturn,
} from './define-tool.js';
export { BatonError, ERROR_CODES, isBatonError, type ErrorCode } from './errors.js';
export type { CallEvent, CallEventInput, CallEventType } from './events.js';
export {
  backgroundContinuationMessage,
  defaultResultFormatter,
  type FormattedCall,
  type ResultFormatter,
} from './formatter.js';
export {
  DEFAULT_INLINE_BUDGET_MS,
  DEFAULT_MAX_ARGS_BYTES,
  INTERNAL_ERROR_MESSAGE,
  TOOL_NAME_PATTERN,
} from './limits.js';
export {
  toAnthropicTool,
  toGeminiFunctionDeclaration,
  toMcpTool,
  toOpenAITool,
  type AnthropicTool,
  type DeclarationOptions,
  type GeminiFunctionDeclaration,
  type McpTaskSupport,
  type McpToolDeclaration,
  type OpenAIFunctionTool,
} from './providers.js';
export { ToolRegistry } from './registry.js';
export {
  connectionRequired,
  isConnectionRequired,
  isToolSuccess,
  success,
  type ConnectionRequired,
  type ToolImage,
  type ToolSuccess,
} from './results.js';
export {
  isStandardSchema,
  toJsonSchema,
  type InferSchemaOutput,
  type JsonSchema,
  type ToolSchema,
  type Validate,
  type ValidationResult,
} from './schema.js';
export { isToolError, ToolError } from './tool-error.js';
