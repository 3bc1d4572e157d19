export { AGENT_BUDGET_MS, agentLoopRuntime, type GateOf } from './agent-tools.js';
export { bridgeConformanceOptions } from './bridge-conformance.js';
export { CHROMIUM_ARGS, chromiumPath } from './chromium.js';
export { RESTART_BUDGET_MS, recoveredAndNotified, restartingRuntime } from './restart.js';
export { MAIN, type ServerProcess, type ServerStart, startServer } from './server-process.js';
export { VOICE_BUDGET_MS, voiceRuntime } from './voice-tools.js';
export { eventually, nextStart, promoteWhenStarted } from './waits.js';
export { CLI, startWorker, type WorkerProcess } from './worker-process.js';
