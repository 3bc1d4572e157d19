import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // The leak test measures the heap after a forced collection.
    execArgv: ['--expose-gc'],
  },
});
