import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: [
      'crash/**/*.test.ts',
      'distributed/**/*.test.ts',
      'readme/**/*.test.ts',
      'reliability/**/*.test.ts',
      'upgrade/**/*.test.ts',
      'src/**/*.test.ts',
      'hosts/**/*.test.ts',
    ],
    // Real processes: starting Node and opening SQLite take real time on a loaded 2-core machine.
    testTimeout: 60_000,
    // One file at a time: the load and fault tests take both cores on purpose, and workers
    // starved by them would look dead to each other (their leases lapse) in the scale-out tests.
    fileParallelism: false,
  },
});
