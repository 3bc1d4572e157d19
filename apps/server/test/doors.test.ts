import { a2aDriver } from './doors/a2a-driver.js';
import { describeDoorConformance } from './doors/door-suite.js';
import { mcpDriver } from './doors/mcp-drivers.js';
import { restDriver } from './doors/rest-driver.js';
import { startWorld } from './doors/world.js';

describeDoorConformance('REST', ['spawn', 'schedule', 'steer', 'cancel', 'approve', 'read'], async () => {
  const world = await startWorld();
  return { driver: restDriver(world), world, close: () => world.close() };
});

const MCP_OPERATIONS = ['spawn', 'schedule', 'steer', 'cancel', 'read'] as const;

describeDoorConformance('MCP 2025-11-25, a session each', [...MCP_OPERATIONS, 'batch'], async () => {
  const world = await startWorld();
  return { driver: mcpDriver(world, '2025-11-25'), world, close: () => world.close() };
});

// Each session opened by a token of the same caller holding `tools` alone: what a request may do
// is its own token's, never the opener's.
describeDoorConformance(
  'MCP 2025-11-25, a session opened by a narrower token',
  [...MCP_OPERATIONS, 'batch'],
  async () => {
    const world = await startWorld();
    const driver = mcpDriver(world, '2025-11-25', { opener: (caller) => world.narrowTokenOf(caller) });
    return { driver, world, close: () => world.close() };
  },
);

describeDoorConformance('MCP 2026-07-28', MCP_OPERATIONS, async () => {
  const world = await startWorld();
  return { driver: mcpDriver(world, '2026-07-28'), world, close: () => world.close() };
});

// A2A's skills are the tools alone (no spawn_background), it has no batches, and no steering.
describeDoorConformance('A2A', ['cancel', 'approve', 'read'], async () => {
  const world = await startWorld();
  return { driver: a2aDriver(world), world, close: () => world.close() };
});
