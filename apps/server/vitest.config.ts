import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // Real processes and a real browser: starting them takes real time on a loaded 2-core machine.
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
