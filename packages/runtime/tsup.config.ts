import { packageBuild } from '../../tsup.base.js';

export default packageBuild([
  'src/index.ts',
  'src/testing.ts',
  'src/bridge/index.ts',
  'src/bridge/testing.ts',
  // The process the delivery suite kills, run from the suite's own folder.
  'src/bridge/conformance/dying-process.ts',
]);
