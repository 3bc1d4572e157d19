import { createServer, get, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRuntime, type Runtime } from '@baton/runtime';
import { memoryStore } from '@baton/runtime/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { createMcpHandler, type McpHandler, toNodeHandler } from '../src/index.js';
import { initializeOver } from './over-http.js';

const opened: Array<{ runtime: Runtime; mcp: McpHandler; http: Server }> = [];
afterEach(async () => {
  for (const { runtime, mcp, http } of opened.splice(0)) {
    await mcp.close();
    http.closeAllConnections();
    await new Promise((resolve) => http.close(resolve));
    await runtime.close();
  }
});

async function serve(): Promise<string> {
  const runtime = createRuntime({ store: memoryStore() });
  const mcp = createMcpHandler({ runtime });
  const http = createServer(toNodeHandler(mcp));
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  opened.push({ runtime, mcp, http });
  return `http://localhost:${(http.address() as AddressInfo).port}/mcp`;
}

describe('the handler on node:http', () => {
  it("sends a 2025-11-25 GET stream's headers at once, before its first event", async () => {
    const url = await serve();
    const initialized = await initializeOver(url, 't');
    const session = initialized.headers.get('mcp-session-id') ?? '';
    await initialized.text();
    // Nothing is sent on this stream: only its headers can answer the request.
    const response = await new Promise<IncomingMessage>((resolve, reject) => {
      get(url, {
        headers: {
          accept: 'text/event-stream',
          'mcp-session-id': session,
          'mcp-protocol-version': '2025-11-25',
        },
      })
        .on('response', resolve)
        .on('error', reject);
    });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('text/event-stream');
    response.destroy();
  }, 10_000);
});
