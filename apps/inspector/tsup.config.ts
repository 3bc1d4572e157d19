import { defineConfig } from 'tsup';

export default defineConfig([
  // For the server: where the page's files are.
  { entry: ['src/index.ts'], format: ['esm'], dts: true, clean: false, target: 'node20' },
  // The page: one bundle, beside its HTML and CSS (copied from public/).
  {
    entry: { inspector: 'src/page/main.tsx' },
    outDir: 'dist/assets',
    format: ['esm'],
    platform: 'browser',
    target: 'es2022',
    minify: true,
    sourcemap: true,
    publicDir: 'public',
    noExternal: [/.*/],
    esbuildOptions(options) {
      options.jsx = 'automatic';
      options.jsxImportSource = 'preact';
      // The form library is written for React: it runs on preact's compatibility layer.
      options.alias = {
        react: 'preact/compat',
        'react-dom': 'preact/compat',
        'react/jsx-runtime': 'preact/jsx-runtime',
      };
    },
  },
]);
