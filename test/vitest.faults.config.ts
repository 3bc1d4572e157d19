import { defineConfig } from 'vitest/config';

/** The combined-fault suite alone (`npm run test:faults`; `BATON_FAULT_ROUNDS=N` for the long form). */
export default defineConfig({
  test: {
    include: ['reliability/combined-faults.test.ts'],
    testTimeout: 60_000,
    fileParallelism: false,
  },
});
