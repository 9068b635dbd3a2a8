import { defineConfig } from 'vitest/config';

// `npm run test:model`: the model-based test of the whole stack (test/model/, docs/testing.md), kept
// out of `npm test`. `npm run test:model -- --runs 500` is the soak (scripts/test-model.ts hands the
// flag to the test as GPUOPS_MODEL_RUNS); GPUOPS_MODEL_SEED replays one run.
export default defineConfig({
  test: {
    include: ['test/model/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    // A run of many sequences; the property's own budget ends it well before this.
    testTimeout: 60 * 60_000,
    hookTimeout: 60_000,
    fileParallelism: false,
    maxWorkers: 1,
  },
});
