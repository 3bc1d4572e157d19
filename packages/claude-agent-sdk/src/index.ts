/**
 * `@baton/claude-agent-sdk`: Baton inside the Claude Agent SDK. A runtime's tools as an in-process
 * MCP server (a call past its inline budget answered with the acknowledgement, `wait_background`
 * and the other background tools beside them), and the session's background results brought to
 * the model through the SDK's hooks, by their scheduling.
 */
export { type BatonHooksOptions, batonHooks, RESULT_TURN_PROMPT } from './hooks.js';
export { type BatonMcpServerOptions, batonMcpServer } from './server.js';
