/**
 * `@baton/runtime/bridge/testing`: the bridge conformance suite every bridge runs through a small
 * driver of its own, as every store runs `@baton/store/testing`. Uses vitest (an optional peer
 * dependency of this package).
 */
export type { BridgeConversation, BridgeDriver, BridgeTurn, TurnResult } from './conformance/driver.js';
export { type BridgeConformanceOptions, describeBridgeConformance } from './conformance/suite.js';
export { found, SUITE_BUDGET_MS, timesIn } from './conformance/suite-runtime.js';
