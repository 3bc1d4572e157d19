/** `@baton/runtime`: the actor system that runs tool calls. What this file exports is the public API. */
export { type Clock, systemClock } from './clock.js';
export { DEFAULT_CONCURRENCY, OUTPUT_TAIL_CHARS } from './limits.js';
export {
  type CallRequest,
  createRuntime,
  type Runtime,
  type RuntimeOptions,
  type RuntimeStats,
} from './runtime.js';
