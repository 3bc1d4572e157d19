import { createServer, type Server } from 'node:http';
import { createRuntime, type Runtime } from '@baton/runtime';
import { memoryStore } from '@baton/store';
import { createMcpHandler, toNodeHandler } from '../../src/index.js';
import { conformanceTools } from './fixture-tools.js';

export interface FixtureServer {
  url: string;
  runtime: Runtime;
  close(): Promise<void>;
}

/** The server the conformance suite runs against: the fixture tools, on a loopback port. */
export async function startFixtureServer(port = 0): Promise<FixtureServer> {
  const runtime = createRuntime({ tools: conformanceTools, store: memoryStore(), inlineBudgetMs: 300 });
  await runtime.ready;
  const mcp = createMcpHandler({ runtime });
  const handle = toNodeHandler(mcp);
  const server: Server = createServer((request, response) => {
    void handle(request, response);
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const address = server.address();
  const bound = typeof address === 'object' && address ? address.port : port;
  return {
    url: `http://localhost:${bound}/mcp`,
    runtime,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await mcp.close();
      await runtime.close();
    },
  };
}
