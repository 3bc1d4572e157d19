import { defineConfig } from 'tsup';

/** The call's MCP App view: one script for the browser, with what it imports, inlined into its page. */
export default defineConfig({
  entry: { view: 'call-app/view.ts' },
  outDir: 'dist/call-app',
  format: ['esm'],
  platform: 'browser',
  target: 'es2022',
  noExternal: [/.*/],
  minify: true,
  clean: false,
  dts: false,
  sourcemap: false,
});
