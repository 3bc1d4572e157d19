/**
 * `@baton/a2a`: Baton behind an A2A agent (Agent2Agent v1.0, on `@a2a-js/sdk`'s server pieces).
 * The runtime's tools as the agent's skills, each task a Baton call: completed within the inline
 * budget, `working` past it (even when the client asked to block), its end brought to the task,
 * across a restart, pushed to its configs; and an agent's own model's tool calls through Baton
 * (`taskToolCalls`). What this file exports is the public API.
 */
export { type BatonA2aAgent, type BatonA2aAgentOptions, batonA2aAgent, skillsOf } from './agent.js';
export { BatonEventBuses } from './buses.js';
export {
  BatonAgentExecutor,
  type CallerOf,
  type SkillCall,
  skillCallOf,
  skillMessage,
} from './executor.js';
export { PUSH_MESSAGES, TaskPushConfigs } from './push.js';
export { BatonTaskStore, MAX_TASKS_PAGE } from './task-store.js';
export { SESSION_PREFIX } from './tasks.js';
export {
  AGENT_SESSION_PREFIX,
  agentSessionOf,
  type TaskToolCall,
  type TaskToolCalls,
  taskToolCalls,
} from './tool-calls.js';
