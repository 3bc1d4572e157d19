import { appBuild } from '../../tsup.base.js';

export default appBuild('src/main.ts');
