/** `@baton/runtime`: the actor system that runs tool calls. What this file exports is the public API. */
export { type Clock, systemClock } from './clock.js';
export { DEFAULT_CONCURRENCY, OUTPUT_TAIL_CHARS } from './limits.js';
export {
  type BatchOptions,
  type BatchRequest,
  type CallRequest,
  createRuntime,
  type Runtime,
  type RuntimeLimits,
  type RuntimeOptions,
  type RuntimeStats,
} from './runtime.js';
