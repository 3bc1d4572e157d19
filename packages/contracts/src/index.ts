/**
 * `@baton/contracts`: the vocabulary every Baton package shares. What this file exports is the
 * public API; it imports neither xstate nor rxjs.
 */
export {
  type Artifact,
  CALL_STATUSES,
  type CallError,
  type CallIssue,
  type CallRecord,
  type CallReply,
  type CallStatus,
  type CallUpdate,
  type Concurrency,
  type DeliveryStatus,
  type EventOutcome,
  type EventResolution,
  type ExecutionMode,
  isTerminalStatus,
  type LogStream,
  type Notification,
  type NotificationOutcome,
  type NotificationStatus,
  type Progress,
  type RecordedError,
  type ReplyStatus,
  type RetryPolicy,
  type RuntimeInstance,
  type Schedule,
  type Scheduling,
  type StepResult,
  type TerminalStatus,
  type TraceCarrier,
  type WebhookDelivery,
} from './call.js';
export { type Caller, type CallerKind, holdsScope, TRUSTED_CALLER } from './caller.js';
export type { MessageOptions, PrepareContext, ToolContext, UpdateOptions } from './context.js';
export {
  type AnyTool,
  checkRetryPolicy,
  defineTool,
  type ExecutionOptions,
  type Tool,
  type ToolArgs,
  type ToolConfig,
  type ToolOutput,
  type ToolReturn,
} from './define-tool.js';
export { BatonError, ERROR_CODES, type ErrorCode, isBatonError } from './errors.js';
export type { CallEvent, CallEventInput, CallEventType, CallTransition, RuntimeFailure } from './events.js';
export { endOf } from './events.js';
export {
  backgroundContinuationMessage,
  defaultResultFormatter,
  type FormattedCall,
  LATER_NOTIFICATION,
  type ResultFormatter,
} from './formatter.js';
export { idProblem } from './ids.js';
export type { ElicitationResponse, InputOptions, InputRequest, InputResponse } from './input.js';
export {
  type JsonBodyRead,
  JsonShapeReader,
  type JsonTextLimits,
  jsonTextRefusal,
  readJsonBody,
} from './json-text.js';
export {
  DEFAULT_INLINE_BUDGET_MS,
  DEFAULT_MAX_ARGS_BYTES,
  DEFAULT_MAX_ARGS_DEPTH,
  DEFAULT_MAX_BODY_DEPTH,
  DEFAULT_MAX_BODY_KEYS,
  INTERNAL_ERROR_MESSAGE,
  MAX_ID_CHARS,
  TOOL_NAME_PATTERN,
} from './limits.js';
export { notificationText } from './notification-text.js';
export {
  type AnthropicTool,
  type DeclarationOptions,
  type GeminiFunctionDeclaration,
  type GeminiFunctionResult,
  type McpTaskSupport,
  type McpToolDeclaration,
  type OpenAIFunctionTool,
  type OpenAIResponsesTool,
  taskSupportOf,
  toAnthropicTool,
  toGeminiFunctionDeclaration,
  toGeminiNotificationResponse,
  toGeminiResponse,
  toMcpTool,
  toOpenAIResponsesTool,
  toOpenAITool,
} from './providers.js';
export { ToolRegistry } from './registry.js';
export { type ReplyText, replyText } from './reply-text.js';
export {
  type ConnectionRequired,
  connectionRequired,
  isConnectionRequired,
  isToolSuccess,
  success,
  type ToolImage,
  type ToolSuccess,
} from './results.js';
export { isDueAt, startsTurn } from './scheduling.js';
export {
  type InferSchemaInput,
  type InferSchemaOutput,
  isStandardSchema,
  type JsonSchema,
  type ToolSchema,
  toJsonSchema,
  type Validate,
  type ValidationResult,
} from './schema.js';
export {
  type ArgPath,
  REDACTED,
  redactedArgs,
  secretPathsOf,
  withSecretArgsRedacted,
} from './secret-args.js';
export { MAX_MESSAGES_PER_CALL, type SteerReceipt } from './steering.js';
export { strictJsonSchema } from './strict-schema.js';
export { isToolError, ToolError } from './tool-error.js';
export { type ToolOutputForModel, toToolOutputForModel } from './tool-output.js';
export type { ToolCallOf, ToolCallReply } from './typed-calls.js';
