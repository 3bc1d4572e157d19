/** `@baton/runtime`: the actor system that runs tool calls. What this file exports is the public API. */

export type { RuntimeFailure } from '@baton/contracts';
export { Access, type AccessOptions, type QuotaRefusal, type QuotaTaker } from './access.js';
export {
  type ApprovalDecision,
  callAskingApproval,
  callAwaitingApproval,
  replyOf,
  runApproved,
  runDecided,
} from './bridge/approvals.js';
export { BACKGROUND_CONTROL, type BackgroundControlTool, BUILTIN_TOOLS } from './builtin-names.js';
export {
  type BackgroundCaller,
  type BackgroundControl,
  type BackgroundControlHost,
  backgroundControl,
  DEFAULT_WAIT_MS,
  MAX_WAIT_MS,
  WAIT_BEAT_MS,
} from './builtins/background-control.js';
export { type Clock, systemClock } from './clock.js';
export {
  DEFAULT_BACKGROUND_PER_SESSION,
  DEFAULT_BACKGROUND_PER_WORKER,
  DEFAULT_CONCURRENCY,
  DEFAULT_LEASE_MS,
  DEFAULT_MAX_ATTEMPTS,
  DEFAULT_MAX_OUTPUT_CHARS,
  DEFAULT_MAX_QUEUED,
  DEFAULT_WEBHOOK_RETRY_SCHEDULE_MS,
  OUTPUT_LOG_MAX_CHARS,
  OUTPUT_TAIL_CHARS,
} from './defaults.js';
export type { FollowOptions } from './follow-store.js';
export { type Logger, quietLogger } from './log.js';
export type * from './options.js';
export { createRuntime } from './runtime.js';
export type * from './runtime-api.js';
export { CALL_ENDED } from './webhooks/delivery-of.js';
export { webhookEndpointProblem } from './webhooks/endpoints.js';
export { redactedUrl } from './webhooks/redacted-url.js';
export type { WebhookSend } from './webhooks/targets.js';
