/** `@baton/runtime`: the actor system that runs tool calls. What this file exports is the public API. */
export { type Clock, systemClock } from './clock.js';
export { OUTPUT_TAIL_CHARS, DEFAULT_CONCURRENCY } from './limits.js';
export {
  createRuntime,
  type CallRequest,
  type Runtime,
  type RuntimeOptions,
  type RuntimeStats,
} from './runtime.js';
