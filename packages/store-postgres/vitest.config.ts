import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // Every test here talks to a real PostgreSQL, beside the other packages' suites on 2 cores.
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
