import { defineConfig } from 'vitest/config';

// `npm run test:reliability`: load and fault tests (test/reliability/**), kept out of `npm test`.
// Each file starts its own Redis, simulator and Slack fake. One file at a time: they load both cores
// on purpose, and two at once would measure each other. See docs/reliability.md.
export default defineConfig({
  test: {
    include: ['test/reliability/**/*.test.ts'],
    testTimeout: 180_000,
    hookTimeout: 60_000,
    fileParallelism: false,
    maxWorkers: 1,
  },
});
