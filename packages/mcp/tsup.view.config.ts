import { readFileSync } from 'node:fs';
import { defineConfig } from 'tsup';

const { version } = JSON.parse(readFileSync(new URL('package.json', import.meta.url), 'utf8')) as {
  version: string;
};

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
  // The package's version, as the view tells its host (see BATON_VERSION in view.ts).
  define: { BATON_VERSION: JSON.stringify(version) },
});
