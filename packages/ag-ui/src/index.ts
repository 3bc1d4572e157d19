/**
 * `@baton/ag-ui`: Baton behind an AG-UI agent (agent to web front end, CopilotKit). A run's tool
 * calls as Baton calls and AG-UI events; a call that goes on past its run is shown as an activity,
 * and its result comes to a later run of the thread as a `TOOL_CALL_RESULT` for the original call;
 * an approval finishes the run with an interrupt that resumes it. What this file exports is the
 * public API.
 */
export { APPROVAL_REASON, type ApprovalPayload, approvalInterrupt } from './approvals.js';
export { type AgUiRunEvent, BATON_CALL_ACTIVITY, type CallActivity } from './events.js';
export { type AgUiHandlerOptions, agUiHandler, MAX_RUN_INPUT_BYTES } from './http.js';
export {
  type AgUiModel,
  type AgUiModelTurn,
  type AgUiToolCall,
  type BatonAgUiOptions,
  batonAgUiRun,
  DEFAULT_MAX_STEPS,
} from './run.js';
