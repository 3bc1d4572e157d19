import { defineConfig } from 'tsup';

/** The one build of every package: ESM with declarations, for Node 20. */
export function packageBuild(entry: string[] = ['src/index.ts']) {
  return defineConfig({ entry, format: ['esm'], dts: true, clean: true, sourcemap: true, target: 'node20' });
}

/** An app (the server, the bench): one entry, no declarations. */
export function appBuild(entry: string) {
  return defineConfig({ entry: [entry], format: ['esm'], clean: true, sourcemap: true, target: 'node20' });
}
