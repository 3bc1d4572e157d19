/**
 * `@baton/server`: Baton's HTTP server as a library. `createServer({ runtime })` is the whole
 * server (a Fastify app); `batonPlugin` mounts the same routes in a Fastify app you have. The
 * `baton` command (`baton serve ./tools.js`) runs it over your tools. What this file exports is the
 * public API.
 */
export { loadConfig, type ServerConfig } from './config.js';
export { createLogger, type LogLevel } from './logger.js';
export { type BatonPluginOptions, batonPlugin } from './plugin.js';
export { createServer, type ServerOptions } from './server.js';
export { loadServedModule, type ServedModule } from './tools-module.js';
export { type WebhookTarget, webhookEndpoints } from './webhooks.js';
