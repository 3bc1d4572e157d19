import { type NodeMcpRequestHandler, toNodeHandler as sdkToNodeHandler } from '@modelcontextprotocol/node';
import type { McpHandler } from './handler.js';

/**
 * The handler as a Node `(req, res, parsedBody?)` function, for `node:http`, Express and Fastify.
 * Behind a body parser, pass the parsed body; otherwise the handler reads the request itself.
 */
export function toNodeHandler(
  handler: McpHandler,
  options: { onError?: (error: Error) => void } = {},
): NodeMcpRequestHandler {
  return sdkToNodeHandler(handler, options.onError ? { onerror: options.onError } : {});
}
