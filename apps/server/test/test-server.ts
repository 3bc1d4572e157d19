import { createRuntime, type Runtime } from '@baton/runtime';
import { SimulatedClock } from '@baton/runtime/testing';
import type { FastifyInstance } from 'fastify';
import { afterEach } from 'vitest';
import { demoTools } from '../src/demo-tools.js';
import { createServer, type ServerOptions } from '../src/server.js';

const open: Array<{ app: FastifyInstance; runtime: Runtime }> = [];

// Every server a test makes is closed when the test ends, whatever happened in it.
afterEach(async () => {
  for (const { app, runtime } of open.splice(0)) {
    await app.close();
    await runtime.close();
  }
});

/** The server over the demo tools, on a simulated clock, for `inject()` or a listen of its own. */
export async function testServer(options: Omit<ServerOptions, 'runtime'> = {}) {
  const runtime = createRuntime({ tools: demoTools, clock: new SimulatedClock() });
  await runtime.ready;
  const app = createServer({ runtime, ...options });
  open.push({ app, runtime });
  return { app, runtime };
}
