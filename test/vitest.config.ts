import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: [
      'crash/**/*.test.ts',
      'distributed/**/*.test.ts',
      'readme/**/*.test.ts',
      'reliability/**/*.test.ts',
      'src/**/*.test.ts',
    ],
    // Real processes: starting Node and opening SQLite take real time on a loaded 2-core machine.
    testTimeout: 60_000,
  },
});
