import { describeDoorConformance } from './doors/door-suite.js';
import { restDriver } from './doors/rest-driver.js';
import { startWorld } from './doors/world.js';

describeDoorConformance('REST', ['spawn', 'schedule', 'steer', 'cancel', 'approve', 'read'], async () => {
  const world = await startWorld();
  return { driver: restDriver(world), world, close: () => world.close() };
});
