import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Runtime } from '@baton/runtime';
import { createMcpHandler, type McpHandler, type McpHandlerOptions, toNodeHandler } from '../src/index.js';

export interface OverHttp {
  mcp: McpHandler;
  /** The endpoint, on a loopback port. */
  url: string;
  /** Closes what was given to `onClose`, the handler, the HTTP server and the runtime. */
  close(): Promise<void>;
  /** Something to close first (a client). */
  onClose(close: () => Promise<void>): void;
}

/** A runtime's tools served over MCP on a loopback port, as real clients reach them. */
export async function serveOverHttp(
  runtime: Runtime,
  options: Omit<McpHandlerOptions, 'runtime'> = {},
): Promise<OverHttp> {
  const mcp = createMcpHandler({ runtime, ...options });
  const http = createServer(toNodeHandler(mcp));
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  const first: Array<() => Promise<void>> = [];
  return {
    mcp,
    url: `http://localhost:${port}/mcp`,
    onClose: (close) => first.push(close),
    async close() {
      for (const close of first.splice(0)) await close();
      await mcp.close();
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
      await runtime.close();
    },
  };
}

/** A 2025-11-25 `initialize`, POSTed as a client opening a session sends it. */
export function initializeOver(url: string, clientName = 'test'): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: {
        protocolVersion: '2025-11-25',
        capabilities: {},
        clientInfo: { name: clientName, version: '1' },
      },
    }),
  });
}
