/**
 * `@baton/openai-realtime`: Baton in OpenAI Realtime voice agents. A `RealtimeAgent`'s tools run as
 * Baton calls; the ends of those that went to the background are put into the live conversation.
 */
export {
  BatonRealtimeResults,
  type BatonRealtimeResultsOptions,
  batonRealtimeResults,
  type RealtimeConversation,
} from './results.js';
export { type BatonRealtimeTool, type BatonRealtimeToolsOptions, batonRealtimeTools } from './tools.js';
