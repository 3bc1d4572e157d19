/** `@baton/bus`: the typed call event stream, routed per call and per session. */
export type { CallEvent, CallEventType, RuntimeFailure } from '@baton/contracts';
export { EventBus } from './event-bus.js';
