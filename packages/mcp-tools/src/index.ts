export { type McpToolsOptions, mcpTools } from './mcp-tools.js';
