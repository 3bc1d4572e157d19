/**
 * `@baton/client`: Baton's REST API from any JavaScript that has `fetch`, typed by your tools.
 */

export type { CallEvent, CallRecord, CallReply, Notification, ToolCallReply } from '@baton/contracts';
export {
  type BatonClient,
  type CallPage,
  type CallRequestOptions,
  type ClientOptions,
  createClient,
  type DeclarationFormat,
  type ListCallsFilter,
  type NotificationFilter,
} from './client.js';
export {
  BatonClientError,
  type ClientErrorCode,
  isBatonClientError,
  type RequestIssue,
  type ServerErrorCode,
} from './errors.js';
export type { FollowOptions } from './follow.js';
export type { CallInput, ToolCallInput, ToolSource, ToolsOf } from './tools.js';
