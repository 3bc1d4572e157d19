import { defineConfig } from 'tsup';

/** The bench (`dist/main.js`) and the long run (`dist/long-run.js`): apps, no declarations. */
export default defineConfig({
  entry: { main: 'src/main.ts', 'long-run': 'src/long-run/main.ts' },
  format: ['esm'],
  clean: true,
  sourcemap: true,
  target: 'node20',
});
