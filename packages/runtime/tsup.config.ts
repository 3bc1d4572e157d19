import { packageBuild } from '../../tsup.base.js';

export default packageBuild([
  'src/index.ts',
  'src/testing.ts',
  'src/bridge/index.ts',
  'src/bridge/testing.ts',
]);
