/**
 * `@baton/livekit`: Baton inside LiveKit Agents for Node. A runtime's tools as function tools of a
 * voice `AgentSession` (a call past its inline budget acknowledged, so the agent keeps talking),
 * and the ends of the calls in the background put into the session by their scheduling.
 */
export {
  BatonLiveKitResults,
  type BatonLiveKitResultsOptions,
  batonLiveKitResults,
  type LiveKitSession,
} from './results.js';
export { type BatonLiveKitTool, type BatonLiveKitToolsOptions, batonLiveKitTools } from './tools.js';
