import { defineConfig } from 'tsup';

/** An app, not a library: no declarations. */
export default defineConfig({
  entry: ['src/main.ts'],
  format: ['esm'],
  clean: true,
  sourcemap: true,
  target: 'node20',
});
