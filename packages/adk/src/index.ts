/**
 * `@baton/adk`: Baton inside Google's Agent Development Kit. A runtime's tools as ADK tools (a call
 * past its inline budget answers with the acknowledgement, as an ADK long-running tool), its result
 * back to the agent later as the function response of the same call, by its scheduling, and
 * approvals through ADK's tool confirmation.
 */
export {
  type AdkContent,
  type BatonAdkResultsOptions,
  batonAdkResults,
  resultMessage,
  resultText,
} from './results.js';
export {
  type BatonAdkToolsOptions,
  type BatonConfirmationPayload,
  batonAdkTools,
  CONFIRMATION_PENDING,
} from './tools.js';
