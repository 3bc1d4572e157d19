/**
 * `@baton/gemini`: Baton in Gemini. A Live session's function calls as Baton calls, slow ones
 * acknowledged and their results sent later with their scheduling; and the same for a
 * `generateContent` loop.
 */
export { geminiTools, isNonBlocking } from './declarations.js';
export {
  type FunctionCallOptions,
  functionResponseParts,
  type GeminiNotifications,
  geminiNotifications,
  notificationPart,
} from './generate-content.js';
export { BatonLive, type BatonLiveOptions, batonLive, type LiveConnection } from './live.js';
