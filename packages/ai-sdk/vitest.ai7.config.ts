import { defineConfig } from 'vitest/config';

/** The same tests on `ai` 7, the AI SDK's current major (`ai` 6, the one before, is the default run). */
export default defineConfig({
  resolve: {
    alias: [
      { find: /^ai$/, replacement: 'ai-v7' },
      { find: /^ai\/test$/, replacement: 'ai-v7/test' },
    ],
  },
});
