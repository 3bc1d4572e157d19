/**
 * `@baton/runtime/bridge`: the bridge kit. What every bridge to an agent framework shares, so that
 * a bridge keeps only its framework's mapping: the call, pull delivery (the loop asks at each
 * step, and says when the model has a result), push delivery (the kit watches and puts results
 * into a live conversation), the placement of results in a model's messages, and approvals. What
 * this file exports is public API; `docs/ADD-A-BRIDGE.md` says how a bridge uses it.
 */
export { isDueAt, startsTurn } from '@baton/contracts';
export {
  type ApprovalDecision,
  type ApprovalRequest,
  approvalRequestOf,
  callAskingApproval,
  callAwaitingApproval,
  replyOf,
  runApproved,
  runDecided,
} from './approvals.js';
export { argumentsOf, bridgeCall, callRequestOf, type FrameworkCall } from './call.js';
export { idleTurns } from './idle-turns.js';
export { PlacedMessages, turnStartIndex } from './placing.js';
export { type PullDelivery, type PullDeliveryOptions, pullDelivery } from './pull-delivery.js';
export {
  type PushDelivery,
  type PushDeliveryOptions,
  type PushTarget,
  pushDelivery,
} from './push-delivery.js';
